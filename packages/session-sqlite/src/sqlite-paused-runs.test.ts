import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { SessionStoreV1 } from '@ghost/core/session-store';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { sqliteSessionStore } from './sqlite-session-store.js';
import {
  type NodeScript,
  requireBuiltPackages,
  startNodeScript,
  stopNodeScripts,
} from './test-support/node-script.js';
import { rawDatabase } from './test-support/raw-database.js';

// Paused runs (approvals: 'suspend') across real processes sharing one file, each through the
// built packages. The tool that needs approval appends a line to `executions` each time it runs,
// outside the store, so the count holds across processes, killed ones included.
let directory = '';
let path = '';
let executions = '';
const stores: SessionStoreV1[] = [];
const started: NodeScript[] = [];

beforeAll(() => requireBuiltPackages());
beforeEach(async () => {
  directory = await mkdtemp(join(tmpdir(), 'ghost-sqlite-paused-'));
  path = join(directory, 'sessions.db');
  executions = join(directory, 'executions.log');
});
afterEach(async () => {
  // Each test ends every process it started: it waited for it to exit, or killed it and waited.
  const left = started
    .splice(0)
    .filter((script) => script.child.exitCode === null && script.child.signalCode === null);
  await stopNodeScripts();
  for (const store of stores.splice(0)) await store.close();
  await rm(directory, { recursive: true, force: true });
  expect(
    left.map((script) => script.pid),
    'processes left running',
  ).toEqual([]);
});

interface Report {
  readonly outcome: string;
  readonly error?: { readonly name: string; readonly code?: string };
  readonly response: string;
  readonly seen: readonly (readonly { readonly role: string; readonly content: string }[])[];
}

function pausedRun(id: string, command: string, ...rest: string[]): NodeScript {
  const script = startNodeScript('paused-run.mjs', [path, id, executions, command, ...rest]);
  started.push(script);
  return script;
}

function executionCount(): number {
  if (!existsSync(executions)) return 0;
  return readFileSync(executions, 'utf8').split('\n').filter(Boolean).length;
}

/** Runs `ask` in a process, waits for the suspended run's approval ids, then SIGKILLs it. */
async function pauseThenKill(id: string): Promise<string> {
  const asking = pausedRun(id, 'ask');
  const said = JSON.parse(await asking.waitForLine((line) => line.startsWith('{'))) as {
    outcome: string;
    approvalIds: string[];
  };
  expect(said.outcome).toBe('suspended');
  expect(said.approvalIds).toHaveLength(1);
  asking.child.kill('SIGKILL');
  expect((await asking.exited).signal).toBe('SIGKILL');
  return said.approvalIds[0] ?? '';
}

/** Runs a script to its end and returns its report. */
async function finished(script: NodeScript): Promise<Report> {
  const end = await script.exited;
  expect(end, script.stderr()).toEqual({ code: 0, signal: null });
  const line = script.lines.find((entry) => entry.startsWith('{'));
  return JSON.parse(line ?? '{}') as Report;
}

async function storedPause(id: string): Promise<string | undefined> {
  const store = sqliteSessionStore({ path });
  stores.push(store);
  const session = await store.open({ id, actor: 'ana', lockTimeoutMs: 5_000 });
  try {
    return session.pause;
  } finally {
    await session.release();
  }
}

async function history(id: string) {
  const store = sqliteSessionStore({ path });
  stores.push(store);
  const session = await store.open({ id, actor: 'ana', lockTimeoutMs: 5_000 });
  try {
    return await session.history({ limit: 1_000 });
  } finally {
    await session.release();
  }
}

const roles = (history: readonly { message: string }[]) =>
  history.map((record) => (JSON.parse(record.message) as { role: string }).role);

describe('a paused run across processes on one SQLite file', () => {
  it('is resumed by another process after the one that paused was SIGKILLed: the tool runs once, the turn is kept whole, the session works on', async () => {
    const approvalId = await pauseThenKill('killed-after-pause');
    expect(executionCount()).toBe(0);

    const resumed = await finished(
      pausedRun('killed-after-pause', 'resume', JSON.stringify({ [approvalId]: 'approve' })),
    );
    expect(resumed.outcome, JSON.stringify(resumed.error)).toBe('completed');
    expect(resumed.response).toBe('Refunded.');
    expect(resumed.seen[0]?.at(-1)).toEqual({ role: 'tool', content: 'refunded 1042' });
    expect(executionCount()).toBe(1);

    const turn = await history('killed-after-pause');
    expect(roles(turn)).toEqual(['user', 'assistant', 'tool', 'assistant']);
    expect(new Set(turn.map((record) => record.operationId)).size).toBe(1);
    expect(await storedPause('killed-after-pause')).toBeUndefined();

    const next = await finished(pausedRun('killed-after-pause', 'ask-next'));
    expect(next.outcome, JSON.stringify(next.error)).toBe('completed');
    expect(next.seen[0]?.map((message) => message.role)).toEqual([
      'user',
      'assistant',
      'tool',
      'assistant',
      'user',
    ]);
    expect(executionCount()).toBe(1);
  });

  it('never runs an approved call twice when the resuming process is SIGKILLed inside the tool: the next resume tells the model it may or may not have taken effect', async () => {
    const approvalId = await pauseThenKill('killed-in-tool');
    const doomed = pausedRun(
      'killed-in-tool',
      'resume',
      JSON.stringify({ [approvalId]: 'approve' }),
      'block',
    );
    await doomed.waitForLine((line) => line === 'in-tool');
    expect(executionCount()).toBe(1);
    doomed.child.kill('SIGKILL');
    expect((await doomed.exited).signal).toBe('SIGKILL');

    // The killed holder's lease had 30 s left; its process is gone, so the next resume takes the
    // session over at once (within its 10 s lockTimeoutMs). Nothing is left to decide.
    const again = await finished(pausedRun('killed-in-tool', 'resume', '-'));
    expect(again.outcome, JSON.stringify(again.error)).toBe('completed');
    const toolResult = again.seen[0]?.find((message) => message.role === 'tool');
    expect(toolResult?.content).toMatch(/may or may not have taken effect/);
    expect(executionCount()).toBe(1);
    expect(roles(await history('killed-in-tool'))).toEqual(['user', 'assistant', 'tool', 'assistant']);
    expect(await storedPause('killed-in-tool')).toBeUndefined();
  });

  it('lets exactly one of two processes resuming the same pause at once run; the other fails with RUN_RESUME_CONFLICT', async () => {
    const approvalId = await pauseThenKill('contended');
    const decisions = JSON.stringify({ [approvalId]: 'approve' });
    const pair = [
      pausedRun('contended', 'resume', decisions, 'on-go'),
      pausedRun('contended', 'resume', decisions, 'on-go'),
    ];
    await Promise.all(pair.map((script) => script.waitForLine((line) => line === 'ready')));
    for (const script of pair) script.send('go');
    const reports = await Promise.all(pair.map(finished));
    expect(reports.map((report) => report.outcome).sort()).toEqual(['completed', 'failed']);
    const loser = reports.find((report) => report.outcome === 'failed');
    expect(loser?.error).toEqual({ name: 'RunResumeConflictError', code: 'RUN_RESUME_CONFLICT' });
    expect(loser?.seen).toEqual([]);
    expect(executionCount()).toBe(1);
    expect(roles(await history('contended'))).toEqual(['user', 'assistant', 'tool', 'assistant']);
  });

  it.each([
    ['truncated', 'UPDATE ghost_sessions SET pause = substr(pause, 1, length(pause) / 2) WHERE id = ?'],
    ['tampered', `UPDATE ghost_sessions SET pause = replace(pause, '"refund"', '"refunD"') WHERE id = ?`],
  ])('refuses a %s pause row with PAUSED_RUN_CORRUPT, running nothing', async (kind, update) => {
    const id = `${kind}-pause`;
    const approvalId = await pauseThenKill(id);
    const before = await storedPause(id);
    const raw = rawDatabase(path);
    try {
      const changed = await raw.execute({ sql: update, args: [id] });
      expect(changed.rowsAffected).toBe(1);
    } finally {
      raw.close();
    }
    expect(await storedPause(id)).not.toBe(before);

    const refused = await finished(pausedRun(id, 'resume', JSON.stringify({ [approvalId]: 'approve' })));
    expect(refused.outcome).toBe('failed');
    expect(refused.error).toEqual({ name: 'PausedRunError', code: 'PAUSED_RUN_CORRUPT' });
    expect(refused.seen).toEqual([]);
    expect(executionCount()).toBe(0);
    expect(await history(id)).toEqual([]);
  });
});
