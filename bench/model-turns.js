// Code mode against direct tool calls on one task of 20 lookups, through a real provider
// (@ghost/provider-openai on Chat Completions) and a loopback model server that plays the model:
// model turns, the bytes of every request, the prompt tokens they hold (gpt-tokenizer's
// o200k_base, the encoding of OpenAI's current models), and the time. The model answers at once,
// so the time is Ghost's and the tools'. Each order lookup waits 2 ms, as a fast service would.
import { createServer } from 'node:http';
import { codeMode } from '@ghost/code-mode';
import { createRuntime, defineAgent, defineTool } from '@ghost/core';
import { createOpenAICompatible } from '@ghost/provider-openai';
import { encode } from 'gpt-tokenizer';
import Type from 'typebox';

const orderCount = 20;

/** Order n points at order n + 1: each lookup needs the one before it, as a real chain would. */
function orderRecord(id) {
  return {
    id,
    customer: `Customer ${id}`,
    status: id % 3 === 0 ? 'shipped' : 'pending',
    total: 10 * id + 0.5,
    currency: 'EUR',
    items: [
      { sku: `SKU-${id}-A`, name: 'Blue cotton shirt, size M', quantity: 1 },
      { sku: `SKU-${id}-B`, name: 'Leather belt, brown', quantity: 2 },
    ],
    notes: 'Deliver to the side entrance between 9:00 and 17:00; call ahead.',
    next: id < orderCount ? id + 1 : null,
  };
}

const lookupOrder = defineTool({
  name: 'lookup_order',
  description: 'Returns one order by id, with the id of the next order in the batch.',
  input: Type.Object({ id: Type.Integer() }),
  async execute({ id }) {
    await new Promise((resolve) => setTimeout(resolve, 2));
    return orderRecord(id);
  },
});

const expectedTotal = Array.from({ length: orderCount }, (_, index) => orderRecord(index + 1).total).reduce(
  (sum, total) => sum + total,
  0,
);

const program = `let id = 1;
let total = 0;
while (id !== null) {
  const order = await tools.lookup_order({ id });
  total += order.total;
  id = order.next;
}
({ orders: ${orderCount}, total })`;

/** What the scripted model says on each turn of each strategy. */
const strategies = {
  'direct tool calls, one per turn': (turn) =>
    turn <= orderCount
      ? { toolCalls: [{ name: 'lookup_order', arguments: { id: turn } }] }
      : { text: `The ${orderCount} orders total ${expectedTotal} EUR.` },
  'direct tool calls, all in one turn': (turn) =>
    turn === 1
      ? {
          toolCalls: Array.from({ length: orderCount }, (_, index) => ({
            name: 'lookup_order',
            arguments: { id: index + 1 },
          })),
        }
      : { text: `The ${orderCount} orders total ${expectedTotal} EUR.` },
  'code mode, one program': (turn) =>
    turn === 1
      ? { toolCalls: [{ name: 'exec', arguments: { source: program } }] }
      : { text: `The ${orderCount} orders total ${expectedTotal} EUR.` },
};

function chunk(delta, finishReason = null) {
  const body = {
    id: 'chatcmpl-bench',
    object: 'chat.completion.chunk',
    created: 1_764_806_400,
    model: 'bench-model',
    choices: [{ index: 0, delta, finish_reason: finishReason }],
  };
  return `data: ${JSON.stringify(body)}\n\n`;
}

function streamAnswer(response, answer, promptTokens) {
  response.writeHead(200, { 'content-type': 'text/event-stream' });
  if (answer.text !== undefined) {
    response.write(chunk({ role: 'assistant', content: answer.text }));
    response.write(chunk({}, 'stop'));
  } else {
    answer.toolCalls.forEach((call, index) => {
      response.write(
        chunk({
          tool_calls: [
            {
              index,
              id: `call_${index}_${Math.random().toString(36).slice(2, 8)}`,
              type: 'function',
              function: { name: call.name, arguments: JSON.stringify(call.arguments) },
            },
          ],
        }),
      );
    });
    response.write(chunk({}, 'tool_calls'));
  }
  const usage = { prompt_tokens: promptTokens, completion_tokens: 20, total_tokens: promptTokens + 20 };
  response.write(
    `data: ${JSON.stringify({ id: 'chatcmpl-bench', object: 'chat.completion.chunk', created: 1_764_806_400, model: 'bench-model', choices: [], usage })}\n\n`,
  );
  response.end('data: [DONE]\n\n');
}

/** A loopback model server: counts each request's bytes and prompt tokens and answers per strategy. */
async function startModelServer() {
  const state = { strategy: undefined, turn: 0, requestBytes: 0, promptTokens: 0 };
  const server = createServer((request, response) => {
    const parts = [];
    request.on('data', (part) => parts.push(part));
    request.on('end', () => {
      const body = Buffer.concat(parts);
      const parsed = JSON.parse(body.toString('utf8'));
      // What the model reads: the messages and the tool definitions, as text.
      const promptTokens = encode(JSON.stringify({ messages: parsed.messages, tools: parsed.tools })).length;
      state.turn += 1;
      state.requestBytes += body.length;
      state.promptTokens += promptTokens;
      streamAnswer(response, strategies[state.strategy](state.turn), promptTokens);
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { state, baseURL: `http://127.0.0.1:${server.address().port}/v1`, close: () => server.close() };
}

/**
 * Runs each strategy `runs` times and returns the median of each figure per strategy.
 * @param {{ runs?: number }} [options]
 */
export async function modelTurnFigures({ runs = 5 } = {}) {
  const server = await startModelServer();
  const provider = createOpenAICompatible({ name: 'bench', baseURL: server.baseURL });
  const runtime = createRuntime({ importModule: (specifier) => import(specifier) });
  const rows = [];
  try {
    for (const [name] of Object.entries(strategies)) {
      const samples = [];
      for (let attempt = 0; attempt < runs + 1; attempt += 1) {
        Object.assign(server.state, { strategy: name, turn: 0, requestBytes: 0, promptTokens: 0 });
        const agent = defineAgent({
          name: 'orders',
          instructions: 'You answer questions about orders. Look orders up; never guess.',
          model: provider('bench-model'),
          tools: [lookupOrder],
          ...(name.startsWith('code mode') ? { codeMode: codeMode({ engine: 'quickjs' }) } : {}),
        });
        const startedAt = performance.now();
        const run = await agent.ask(
          `What is the total of orders 1 to ${orderCount}? Follow each order's next id.`,
          {
            runtime,
          },
        );
        const milliseconds = performance.now() - startedAt;
        if (run.outcome !== 'completed') throw new Error(`${name}: ${run.outcome} ${run.error?.message}`);
        // The first run of each strategy warms caches (a host's first start, JIT) and is not counted.
        if (attempt > 0) samples.push({ ...server.state, milliseconds, turns: run.result?.turns ?? 0 });
      }
      const median = (pick) =>
        samples.map(pick).sort((left, right) => left - right)[Math.floor(samples.length / 2)];
      rows.push({
        name,
        turns: median((sample) => sample.turns),
        requestBytes: median((sample) => sample.requestBytes),
        promptTokens: median((sample) => sample.promptTokens),
        milliseconds: median((sample) => sample.milliseconds),
      });
    }
  } finally {
    server.close();
  }
  return rows;
}

/** Prints the figures, with code mode's ratios against each direct strategy. */
export function printModelTurnFigures(rows) {
  console.log(
    `\n${orderCount} chained order lookups through @ghost/provider-openai (Chat Completions) and a loopback model:`,
  );
  console.log(
    'strategy                                model turns  request bytes  prompt tokens   time (median)',
  );
  for (const row of rows) {
    console.log(
      `${row.name.padEnd(40)}${String(row.turns).padStart(11)}${String(row.requestBytes).padStart(15)}${String(row.promptTokens).padStart(15)}${`${row.milliseconds.toFixed(1)} ms`.padStart(16)}`,
    );
  }
  const code = rows.find((row) => row.name.startsWith('code mode'));
  for (const row of rows) {
    if (row === code) continue;
    console.log(
      `code mode vs ${row.name}: ${(row.promptTokens / code.promptTokens).toFixed(1)}x fewer prompt tokens, ${(row.requestBytes / code.requestBytes).toFixed(1)}x fewer request bytes, ${row.turns} → ${code.turns} model turns`,
    );
  }
}
