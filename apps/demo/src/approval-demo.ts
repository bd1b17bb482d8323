import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Agent, createRuntime, defineAgent, defineTool, type ModelV1 } from '@ghost/core';
import { ScriptedModel } from '@ghost/core/testing';
import { sqliteSessionStore } from '@ghost/session-sqlite';
import Type from 'typebox';
import { chooseDemoModel } from './demo-model.js';

const question = 'Please refund order 1042: the parcel arrived broken.';

/** The scripted support agent: it asks for the refund, then confirms it once it has run. */
function createScriptedSupportModel(): ScriptedModel {
  return new ScriptedModel(
    [
      { toolCalls: [{ id: 'call_refund', name: 'refund_order', input: { order: '1042', amount: 59.9 } }] },
      { text: 'Order 1042 is refunded: 59.90 will be back on your card within five days.', delayMs: 15 },
    ],
    { provider: 'scripted', modelId: 'support-demo' },
  );
}

/** A support agent whose refunds wait for a person; `refunds` counts the refunds that really ran. */
function createSupportAgent(model: ModelV1 | string, refunds: string[]): Agent {
  const refundOrder = defineTool({
    name: 'refund_order',
    description: 'Refunds an order to the card it was paid with.',
    input: Type.Object({ order: Type.String(), amount: Type.Number() }),
    needsApproval: true,
    execute: ({ order, amount }) => {
      refunds.push(order);
      return { order, refunded: amount };
    },
  });
  return defineAgent({
    name: 'support',
    instructions:
      'You help customers of a shop. Refund an order with refund_order when asked; then confirm briefly.',
    model,
    tools: [refundOrder],
  });
}

/**
 * A person in the loop, across a restart: the agent's refund waits for approval, so the run saves
 * its pause in a SQLite session and ends `suspended`; a second runtime over the same file (as a
 * restarted server would) approves it, and the run completes with the refund made once.
 */
export async function runApprovalDemo(
  write: (text: string) => void,
  environment: NodeJS.ProcessEnv = process.env,
): Promise<string> {
  const choice = chooseDemoModel(environment);
  const refunds: string[] = [];
  const agent = createSupportAgent(choice.isScripted ? createScriptedSupportModel() : choice.model, refunds);
  const folder = await mkdtemp(join(tmpdir(), 'ghost-demo-approvals-'));
  const path = join(folder, 'sessions.db');
  const session = { id: 'ticket-1042', actor: 'customer-7' };
  const importModule = (specifier: string) => import(specifier);
  try {
    write('\nA person in the loop: a refund waits for approval, across a restart.\n\n');
    const firstStore = sqliteSessionStore({ path });
    const paused = await agent
      .ask(question, {
        runtime: createRuntime({ sessionStore: firstStore, importModule }),
        session,
        approvals: 'suspend',
      })
      .finally(() => firstStore.close());
    if (!paused.suspended) {
      write(
        `  The run ended ${paused.outcome} without asking for approval: ${paused.error?.message ?? paused.response}\n`,
      );
      return paused.outcome ?? 'failed';
    }
    const decisions: Record<string, 'approve'> = {};
    for (const { approvalId, toolName, input } of paused.pendingApprovals) {
      write(`  [paused] ${toolName} ${JSON.stringify(input)} waits for a person (saved in ${path})\n`);
      decisions[approvalId] = 'approve';
    }
    write('  [restart] a new runtime opens the same file; the operator approves\n');
    const secondStore = sqliteSessionStore({ path });
    const resumed = await agent
      .resume({ runtime: createRuntime({ sessionStore: secondStore, importModule }), session, decisions })
      .finally(() => secondStore.close());
    write(`  [support] ${resumed.response}\n`);
    write(`  outcome: ${resumed.outcome}; refunds made: ${refunds.length} (${refunds.join(', ')})\n`);
    return resumed.outcome ?? 'failed';
  } finally {
    await rm(folder, { recursive: true, force: true });
  }
}
