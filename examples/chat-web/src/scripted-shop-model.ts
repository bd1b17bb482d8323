import { randomUUID } from 'node:crypto';
import type { ModelMessage, ModelV1 } from '@ghost/core';
import { ScriptedModel, type ScriptedStep } from '@ghost/core/testing';

/** What the scripted model says when it does not know what was asked. */
const helpText =
  'I am the scripted model: ask where an order is ("Where is order 1042?"), for the sales report, or for a refund ("Refund order 1042"). Set OPENAI_API_KEY, ANTHROPIC_API_KEY or GHOST_MODEL for a real model.';

/** Each chunk of a streamed answer waits this long, so a person sees the text arrive. */
const chunkDelayMs = 40;

function orderProgram(order: string): string {
  return `const found = await tools.lookup_order({ order: ${JSON.stringify(order)} });
if (found.items === undefined) text('Order ' + found.order + ' is not one I know.');
else text('Order ' + found.order + ' (' + found.items.join(', ') + ', ' + found.total + ') is ' + found.status + '.');`;
}

const reportProgram = `const report = await tools.sales_report({ quarter: '2026-Q4' });
text('This quarter: ' + report.teapots + ' teapots, ' + report.cups + ' cups and ' + report.grinders + ' grinders.');`;

/** The text of a user message, whether it is a string or parts. */
function textOf(message: ModelMessage & { role: 'user' }): string {
  if (typeof message.content === 'string') return message.content;
  return message.content.map((part) => (part.type === 'text' ? part.text : '')).join(' ');
}

/** An answer streamed a few words at a time. */
function answer(text: string): ScriptedStep {
  return { text: text.split(/(?<= )/), delayMs: chunkDelayMs };
}

/** What the model does with a new question: one program, a refund to approve, or help. */
function stepForQuestion(question: string): ScriptedStep {
  const words = question.toLowerCase();
  const order = /\d{3,}/.exec(question)?.[0] ?? '1042';
  if (words.includes('refund')) {
    return {
      text: `I will ask you to approve the refund of order ${order}.`,
      toolCalls: [{ id: `call_${randomUUID()}`, name: 'refund_order', input: { order } }],
    };
  }
  if (words.includes('report')) {
    return {
      text: 'The sales report takes about a minute; it is running now.',
      toolCalls: [{ id: `call_${randomUUID()}`, name: 'exec', input: { source: reportProgram } }],
    };
  }
  if (words.includes('order')) {
    return {
      text: 'Let me look that order up.',
      toolCalls: [{ id: `call_${randomUUID()}`, name: 'exec', input: { source: orderProgram(order) } }],
    };
  }
  return answer(helpText);
}

/** What the model does with a tool's result: wait on a slow program, or answer from it. */
function stepForResult(result: ModelMessage & { role: 'tool' }): ScriptedStep {
  if (result.toolName === 'refund_order') {
    if (result.isError) return answer(`I did not refund it: ${result.content}`);
    const { order, refunded } = JSON.parse(result.content) as { order: string; refunded: number };
    return answer(`Order ${order} is refunded: ${refunded} goes back to the card it was paid with.`);
  }
  if (result.isError) return answer(`The program could not run: ${result.content}`);
  const program = JSON.parse(result.content) as { status: string; output?: string; error?: string };
  if (program.status === 'still_working') {
    return { toolCalls: [{ id: `call_${randomUUID()}`, name: 'wait', input: {} }] };
  }
  if (program.status !== 'completed')
    return answer(`The program ended ${program.status}: ${program.error ?? ''}`);
  return answer(program.output?.trim() || 'The program printed nothing.');
}

/**
 * A model that needs no key and no network, for trying the app and for its tests: it reads the
 * last message and answers as a model in code mode would. A question about an order gets a
 * program calling `lookup_order`; one about the report a program calling the slow `sales_report`;
 * a refund a direct call to `refund_order`, which waits for approval. Each answer streams through
 * a one-step `ScriptedModel`.
 */
export function createScriptedShopModel(): ModelV1 {
  const provider = 'scripted';
  const modelId = 'shop-assistant';
  return {
    specificationVersion: 'model-v1',
    provider,
    modelId,
    stream(request, options) {
      const last = request.messages.at(-1);
      const step =
        last?.role === 'tool'
          ? stepForResult(last)
          : last?.role === 'user'
            ? stepForQuestion(textOf(last))
            : answer(helpText);
      return new ScriptedModel([step], { provider, modelId }).stream(request, options);
    },
  };
}
