import { existsSync, readFileSync } from 'node:fs';
import { access, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRuntime, defineAgent, defineTool } from '@ghost/core';
import { SessionBusyError } from '@ghost/core/session-store';
import { ScriptedModel } from '@ghost/core/testing';
import Type from 'typebox';
import { afterEach, beforeAll, beforeEach, expect, it } from 'vitest';
import { postgresSessionStore } from './postgres-session-store.js';
import { describeWithPostgres } from './test-support/describe-with-postgres.js';
import { type AskReply, SessionServerProcess } from './test-support/session-server-process.js';

// Paused runs (approvals: 'suspend') across application server processes on one PostgreSQL. Each
// server's `refund` tool (it needs approval) appends a line to `executions` when it runs, outside
// the store, so the count holds across processes, killed ones included.
const builtStore = fileURLToPath(new URL('../dist/index.js', import.meta.url));

const callRefund = [{ toolCalls: [{ id: 'c1', name: 'refund', input: { order: '1042' } }] }];
const answer = (text: string) => [{ text }];

describeWithPostgres('paused runs across processes on PostgreSQL', ({ cluster }) => {
  let connectionString = '';
  let schemas = 0;
  let directory = '';
  let executions = '';
  const servers: SessionServerProcess[] = [];

  beforeAll(async () => {
    await access(builtStore).catch(() => {
      throw new Error(`${builtStore} is missing: run pnpm build first.`);
    });
    connectionString = await cluster().createDatabase();
  });
  beforeEach(async () => {
    directory = await mkdtemp(join(tmpdir(), 'ghost-postgres-paused-'));
    executions = join(directory, 'executions.log');
  });
  afterEach(async () => {
    const started = servers.splice(0);
    await Promise.all(started.map((server) => server.stop()));
    for (const server of started) {
      expect(server.fatal, 'an unhandled error in a server').toBeUndefined();
      expect(server.child.exitCode !== null || server.child.signalCode !== null).toBe(true);
    }
    await rm(directory, { recursive: true, force: true });
  });

  function nextSchema(): string {
    schemas += 1;
    return `paused_${schemas}`;
  }

  async function startServers(count: number, schema: string): Promise<SessionServerProcess[]> {
    const started = await Promise.all(
      Array.from({ length: count }, () => SessionServerProcess.start(connectionString, schema, executions)),
    );
    servers.push(...started);
    return started;
  }

  const sql = (text: string, values: readonly unknown[] = []) =>
    cluster().sql(text, values, new URL(connectionString).pathname.slice(1));

  function executionCount(): number {
    if (!existsSync(executions)) return 0;
    return readFileSync(executions, 'utf8').split('\n').filter(Boolean).length;
  }

  async function storedTurn(schema: string, id: string) {
    const { rows } = await sql(
      `SELECT m.message, m.operation_id, s.pause FROM ${schema}.ghost_session_messages m
       JOIN ${schema}.ghost_sessions s ON s.sequence = m.session_sequence
       WHERE s.id = $1 ORDER BY m.position`,
      [id],
    );
    return {
      roles: rows.map((row) => (JSON.parse(row.message as string) as { role: string }).role),
      operations: new Set(rows.map((row) => row.operation_id as string)).size,
      pauses: rows.map((row) => row.pause as string | null),
    };
  }

  async function pausedIn(server: SessionServerProcess, session: Record<string, unknown>): Promise<string> {
    const paused = await server.ask('Refund order 1042', session, callRefund, { approvals: 'suspend' });
    expect(paused.outcome, paused.error?.message).toBe('suspended');
    expect(paused.approvalIds).toHaveLength(1);
    return paused.approvalIds[0] ?? '';
  }

  const toolResult = (reply: AskReply) => reply.seen[0]?.find((message) => message.role === 'tool')?.content;

  it('is resumed by another server after the one that paused was SIGKILLed: the tool runs once, the turn is kept whole, the session works on', async () => {
    const schema = nextSchema();
    const [doomed, survivor] = await startServers(2, schema);
    const session = { id: 'killed-after-pause', actor: 'ana', lockTimeoutMs: 10_000 };
    const approvalId = await pausedIn(doomed!, session);
    doomed!.kill();
    await doomed!.exited;
    expect(executionCount()).toBe(0);

    const resumed = await survivor!.resume(session, { [approvalId]: 'approve' }, answer('Refunded.'));
    expect(resumed.outcome, resumed.error?.message).toBe('completed');
    expect(resumed.response).toBe('Refunded.');
    expect(toolResult(resumed)).toBe('refunded 1042');
    expect(executionCount()).toBe(1);
    const turn = await storedTurn(schema, session.id);
    expect(turn.roles).toEqual(['user', 'assistant', 'tool', 'assistant']);
    expect(turn.operations).toBe(1);
    expect(turn.pauses.every((pause) => pause === null)).toBe(true);

    const next = await survivor!.ask('What did I ask?', session, answer('A refund of 1042.'));
    expect(next.outcome, next.error?.message).toBe('completed');
    expect(next.seen[0]?.map((message) => message.role)).toEqual([
      'user',
      'assistant',
      'tool',
      'assistant',
      'user',
    ]);
    expect(executionCount()).toBe(1);
  });

  it('never runs an approved call twice when the resuming server is SIGKILLed inside the tool: the next resume tells the model it may or may not have taken effect', async () => {
    const schema = nextSchema();
    const [pauser, doomed, survivor] = await startServers(3, schema);
    const session = { id: 'killed-in-tool', actor: 'ana', lockTimeoutMs: 10_000 };
    const approvalId = await pausedIn(pauser!, session);
    const inRefund = doomed!.nextEvent('in-refund');
    const dying = doomed!
      .resume(session, { [approvalId]: 'approve' }, answer('never said'), { blockInRefund: true })
      .catch(() => 'killed');
    await inRefund;
    expect(executionCount()).toBe(1);
    doomed!.kill();
    await doomed!.exited;
    expect(await dying).toBe('killed');

    // The lease is 30 s, but the holder's presence connection died with it: the session is free at
    // once (within the 10 s lockTimeoutMs). Nothing is left to decide.
    const again = await survivor!.resume(session, undefined, answer('Check the refund.'));
    expect(again.outcome, again.error?.message).toBe('completed');
    expect(toolResult(again)).toMatch(/may or may not have taken effect/);
    expect(executionCount()).toBe(1);
    expect((await storedTurn(schema, session.id)).roles).toEqual(['user', 'assistant', 'tool', 'assistant']);
  });

  it('lets exactly one of two servers resuming the same pause at once run; the other fails with RUN_RESUME_CONFLICT', async () => {
    const schema = nextSchema();
    const [pauser, first, second] = await startServers(3, schema);
    const session = { id: 'contended', actor: 'ana', lockTimeoutMs: 10_000 };
    const approvalId = await pausedIn(pauser!, session);
    const decisions = { [approvalId]: 'approve' };
    const replies = await Promise.all(
      [first!, second!].map((server) => server.resume(session, decisions, answer('Refunded.'))),
    );
    expect(replies.map((reply) => reply.outcome).sort()).toEqual(['completed', 'failed']);
    const loser = replies.find((reply) => reply.outcome === 'failed');
    expect(loser?.error).toMatchObject({ name: 'RunResumeConflictError', code: 'RUN_RESUME_CONFLICT' });
    expect(loser?.seen).toEqual([]);
    expect(executionCount()).toBe(1);
    expect((await storedTurn(schema, session.id)).roles).toEqual(['user', 'assistant', 'tool', 'assistant']);
  });

  it.each([
    ['truncated', 'left(pause, length(pause) / 2)'],
    ['tampered', `replace(pause, '"refund"', '"refunD"')`],
  ])('refuses a %s pause row with PAUSED_RUN_CORRUPT, running nothing', async (kind, edited) => {
    const schema = nextSchema();
    const [pauser, resumer] = await startServers(2, schema);
    const session = { id: `${kind}-pause`, actor: 'ana', lockTimeoutMs: 10_000 };
    const approvalId = await pausedIn(pauser!, session);
    const changed = await sql(`UPDATE ${schema}.ghost_sessions SET pause = ${edited} WHERE id = $1`, [
      session.id,
    ]);
    expect(changed.rowCount).toBe(1);

    const refused = await resumer!.resume(session, { [approvalId]: 'approve' }, answer('never said'));
    expect(refused.outcome).toBe('failed');
    expect(refused.error).toMatchObject({ name: 'PausedRunError', code: 'PAUSED_RUN_CORRUPT' });
    expect(refused.seen).toEqual([]);
    expect(executionCount()).toBe(0);
    expect((await storedTurn(schema, session.id)).roles).toEqual([]);
  });

  it('scales out: a run paused by one runtime is resumed by a server in another process, and the conversation goes on in a third', async () => {
    const schema = nextSchema();
    const session = { id: 'scaled-out', actor: 'ana', lockTimeoutMs: 10_000 };
    // Two runtimes in this process, each with a store (and a connection pool) of its own, as two
    // application servers would have; the refund tool here must never run.
    const local = [0, 1].map(() => {
      const sessionStore = postgresSessionStore({ connectionString }, { schema });
      return { sessionStore, runtime: createRuntime({ sessionStore }) };
    });
    const refundHere = defineTool({
      name: 'refund',
      description: 'Refunds an order.',
      input: Type.Object({ order: Type.String() }),
      needsApproval: true,
      execute: () => {
        throw new Error('the refund ran in the process that paused');
      },
    });
    try {
      const agent = defineAgent({
        name: 'server',
        model: new ScriptedModel(callRefund),
        tools: [refundHere],
      });
      const paused = await agent.ask('Refund order 1042', {
        runtime: local[0]!.runtime,
        session,
        approvals: 'suspend',
      });
      expect(paused.outcome, paused.error?.message).toBe('suspended');
      const approvalId = paused.pendingApprovals[0]?.approvalId ?? '';
      // The other runtime sees the pause through its own pool, and refuses a new run on it.
      const listed = await local[1]!.sessionStore.list({ actor: 'ana' });
      expect(listed.sessions.map((summary) => [summary.id, summary.hasPausedRun])).toEqual([
        [session.id, true],
      ]);
      const hello = defineAgent({
        name: 'server',
        model: new ScriptedModel([{ text: 'never' }]),
        tools: [refundHere],
      });
      const refused = await hello.ask('Hello?', { runtime: local[1]!.runtime, session });
      expect(refused.outcome).toBe('failed');
      expect(SessionBusyError.isInstance(refused.error)).toBe(true);
      expect((refused.error as SessionBusyError).reason).toBe('paused');

      const [resumer, follower] = await startServers(2, schema);
      const resumed = await resumer!.resume(session, { [approvalId]: 'approve' }, answer('Refunded.'));
      expect(resumed.outcome, resumed.error?.message).toBe('completed');
      expect(toolResult(resumed)).toBe('refunded 1042');
      expect(executionCount()).toBe(1);

      const next = await follower!.ask('What did I ask?', session, answer('A refund of 1042.'));
      expect(next.outcome, next.error?.message).toBe('completed');
      expect(next.seen[0]?.map((message) => message.content)).toEqual([
        'Refund order 1042',
        '',
        'refunded 1042',
        'Refunded.',
        'What did I ask?',
      ]);
      const listedAfter = await local[1]!.sessionStore.list({ actor: 'ana' });
      expect(listedAfter.sessions.map((summary) => summary.hasPausedRun)).toEqual([false]);
    } finally {
      for (const { runtime, sessionStore } of local) {
        await runtime.close();
        await sessionStore.close();
      }
    }
  });
});
