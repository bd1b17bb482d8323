// Where one brokered tool call's round trip goes, stage by stage, each stage timed in isolation in
// this process with the built packages' own code: the host encodes the `tool_calls` frame, the
// parent decodes and checks it, the broker runs the call through core's tool pipeline (lookup,
// validation, budget, lock, events, the tool), the parent encodes the `tool_results` frame, the
// host decodes it, and the guest resumes. The host and guest part is a QuickJS host served in
// this process over a loopback transport (code mode's own `serveProgramInProcess`), less the
// codec stages it includes. The pipe and the two processes' wake-ups are round-trip-floor.js's.
// µs per call, the median of several batches. Alone: `node bench/round-trip-stages.js [batches]`.

import { serveProgramInProcess } from '@ghost/code-mode/testing';
import { defineTool } from '@ghost/core';
import { RunContext } from '@ghost/core/plugin';
import { runToolCall, ToolCallBudget, ToolLock } from '@ghost/core/tool-calls';
import Type from 'typebox';
import { defaultCodeModeLimits } from '../packages/code-mode/dist/limits.js';
import { encodeFrame, FrameDecoder } from '../packages/code-mode/dist/shared/frame-codec.js';
import { parseHostFrame } from '../packages/code-mode/dist/shared/protocol.js';
import { ToolBroker } from '../packages/code-mode/dist/tool-broker.js';
import { ToolCatalog } from '../packages/code-mode/dist/tool-catalog.js';
import { createQuickJSDriver } from '../packages/engine-quickjs/dist/quickjs-driver.js';
import { readQuickJSWasm } from '../packages/engine-quickjs/dist/quickjs-wasm.js';
import { median } from './round-trip-floor.js';

const callsPerBatch = 2000;

const callFrame = (index) => ({
  type: 'tool_calls',
  programId: 'p1',
  calls: [{ callId: String(index), name: 'noop', input: {} }],
});
const resultsFrame = (index) => ({
  type: 'tool_results',
  programId: 'p1',
  results: [{ callId: String(index), ok: true, value: null }],
});

/** µs per call of `work(index)` over a batch, the median of `batches`. */
async function perCall(batches, work) {
  const samples = [];
  for (let batch = 0; batch <= batches; batch += 1) {
    const startedAt = performance.now();
    for (let index = 0; index < callsPerBatch; index += 1) await work(index);
    // The first batch warms the code up, as the calls before it warm a long-lived parent.
    if (batch > 0) samples.push(((performance.now() - startedAt) * 1000) / callsPerBatch);
  }
  return median(samples);
}

/** The environment `openCodeModeSession` runs its calls in: no listener for events. */
function toolEnvironment(tools, onEvent) {
  const controller = new AbortController();
  const invocation = Object.freeze({
    invocationId: 'bench',
    runId: 'bench',
    agentName: 'bench',
    input: '',
    actorId: undefined,
    sessionId: undefined,
    context: Object.freeze({}),
    metadata: Object.freeze({}),
    deadline: undefined,
  });
  return {
    runContext: new RunContext({ invocation, signal: controller.signal }),
    emit: (type, data) => onEvent?.(Object.freeze({ type, data })),
    budget: new ToolCallBudget(Number.MAX_SAFE_INTEGER),
    lock: new ToolLock(),
    tools: new Map(tools.map((tool) => [tool.name, tool])),
  };
}

/** The stages, each timed alone; rows `{ name, median }` in µs per call. */
export async function roundTripStageFigures(batches = 7) {
  const noop = defineTool({
    name: 'noop',
    description: 'Does nothing.',
    input: Type.Object({}),
    execute: () => null,
  });
  const environment = toolEnvironment([noop]);
  const catalog = ToolCatalog.fromTools([noop], 'bench');
  const broker = new ToolBroker({
    catalog,
    limits: { ...defaultCodeModeLimits, toolCalls: Number.MAX_SAFE_INTEGER },
    callTool: (call) => runToolCall(call, environment),
  });
  const program = broker.openProgram('p1', () => 'control-1');
  const calls = Array.from({ length: callsPerBatch }, (_, index) => encodeFrame(callFrame(index)));
  const results = Array.from({ length: callsPerBatch }, (_, index) => encodeFrame(resultsFrame(index)));
  const decoder = new FrameDecoder();
  const decoded = decoder.pushFrames(calls[0])[0].message;
  const rows = [
    {
      name: 'host: encode tool_calls',
      median: await perCall(batches, (index) => encodeFrame(callFrame(index))),
    },
    {
      name: 'parent: decode tool_calls',
      median: await perCall(batches, (index) => decoder.pushFrames(calls[index])),
    },
    { name: 'parent: check the frame', median: await perCall(batches, () => parseHostFrame(decoded)) },
    {
      name: 'parent: tool pipeline alone (runToolCall)',
      median: await perCall(batches, (index) =>
        runToolCall({ toolCallId: `c${index}`, toolName: 'noop', input: {} }, environment),
      ),
    },
    {
      name: 'parent: broker + tool pipeline (validation, events, tool)',
      median: await perCall(batches, (index) =>
        program.call({ callId: String(index), name: 'noop', input: {} }),
      ),
    },
    {
      name: 'parent: encode tool_results',
      median: await perCall(batches, (index) => encodeFrame(resultsFrame(index))),
    },
    {
      name: 'host: decode tool_results',
      median: await perCall(batches, (index) => decoder.push(results[index])),
    },
  ];
  const driver = createQuickJSDriver(readQuickJSWasm());
  const source = `for (let i = 0; i < ${callsPerBatch}; i++) await tools.noop({}); 1`;
  await serveProgramInProcess(driver, {
    tools: ['noop'],
    source,
    rehearse: true,
    answerToolCall: () => null,
  });
  const inProcess =
    (await perCall(batches, async (index) => {
      if (index === 0)
        await serveProgramInProcess(driver, { tools: ['noop'], source, answerToolCall: () => null });
    })) * 1;
  // perCall divides by the batch's calls, which is the program's calls here.
  const codec = rows[0].median + rows[1].median + rows[5].median + rows[6].median;
  rows.push({ name: 'host + guest in process, loopback (with codec)', median: inProcess });
  rows.push({ name: 'host: guest turn (send, resume), less codec', median: inProcess - codec });
  return rows;
}

if (process.argv[1] === (await import('node:url')).fileURLToPath(import.meta.url)) {
  const batches = Number(process.argv[2]) || 7;
  for (const row of await roundTripStageFigures(batches))
    console.log(`${row.name}: ${row.median.toFixed(2)} µs`);
}
