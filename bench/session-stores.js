// Session stores: what one turn of a conversation costs (open the session, load a 50-message window,
// write a two-message turn with its state, release) at 10, 1,000 and 10,000 messages of history, in
// memory, SQLite and PostgreSQL on loopback; 50 concurrent sessions in turns per second through one
// store; the parent's memory with a 10,000-message session read through a 50-message window; and a
// whole agent run with and without a session. Run alone with `node bench/session-stores.js`;
// `pnpm bench` runs it through run.js. Figures: docs/decisions/2026-12-05-session-store-figures.md.
import { createHash, randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRuntime, defineAgent, memorySessionStore } from '@ghost/core';
import { encodeSessionMessage } from '@ghost/core/session-store';
import { ScriptedModel } from '@ghost/core/testing';
import { measure, printTable } from './measure.js';

const historySizes = [10, 1_000, 10_000];
const windowSize = 50;
const mebibyte = 1024 * 1024;
// Room for the turns measured on top of the largest history.
const limits = { maxMessages: 20_000 };

/** A message of about 300 bytes, as a short chat turn is. */
function message(role, index) {
  const text = `${role === 'user' ? 'Question' : 'Answer'} ${index}: ${'lorem ipsum dolor sit amet '.repeat(10)}`;
  return encodeSessionMessage({ role, content: text });
}

function write(operationId, messages, state) {
  const content = { messages, state, outcome: 'completed' };
  const digest = createHash('sha256').update(JSON.stringify(content)).digest('hex');
  return { operationId, digest, ...content };
}

/** Fills a session with `size` messages, 1,000 per write. */
async function fill(store, id, size) {
  const session = await store.open({ id, actor: 'bench', lockTimeoutMs: 60_000 });
  for (let start = 0; start < size; start += 1_000) {
    const messages = [];
    for (let index = start; index < Math.min(size, start + 1_000); index += 1) {
      messages.push(message(index % 2 === 0 ? 'user' : 'assistant', index));
    }
    await session.write(write(`fill-${start}`, messages, { turns: start }));
  }
  await session.release();
}

/** One turn as a run does it against the store. */
async function turn(store, id) {
  const session = await store.open({ id, actor: 'bench', lockTimeoutMs: 60_000 });
  await session.history({ limit: windowSize });
  const n = session.messageCount;
  await session.write(write(randomUUID(), [message('user', n), message('assistant', n + 1)], { turns: n }));
  await session.release();
}

/** The stores this machine can run: memory always; SQLite and PostgreSQL when their packages load. */
async function storeKinds() {
  const kinds = [
    { name: 'memory', open: async () => ({ store: memorySessionStore({ limits }), close: async () => {} }) },
  ];
  try {
    const { sqliteSessionStore } = await import('@ghost/session-sqlite');
    kinds.push({
      name: 'sqlite',
      open: async () => {
        const directory = await mkdtemp(join(tmpdir(), 'ghost-bench-sqlite-'));
        const store = sqliteSessionStore({ path: join(directory, 'sessions.db'), limits });
        return { store, close: () => rm(directory, { recursive: true, force: true }) };
      },
    });
  } catch (error) {
    console.log(`session stores: sqlite skipped (${error.message})`);
  }
  try {
    const { postgresSessionStore } = await import('@ghost/session-postgres');
    const { startPostgresTestCluster } = await import('@ghost/session-postgres/testing');
    const cluster = await startPostgresTestCluster();
    kinds.push({
      name: 'postgres',
      cluster,
      open: async () => {
        const connectionString = await cluster.createDatabase();
        const store = postgresSessionStore({ connectionString }, { limits });
        return { store, close: async () => {} };
      },
    });
  } catch (error) {
    console.log(`session stores: postgres skipped (${error.message})`);
  }
  return kinds;
}

export async function sessionStoreFigures() {
  const results = [];
  const lines = [];
  const kinds = await storeKinds();
  try {
    for (const kind of kinds) {
      const { store, close } = await kind.open();
      try {
        for (const size of historySizes) {
          const id = `history-${size}`;
          await fill(store, id, size);
          results.push(
            await measure(
              `session turn, ${kind.name}, ${size} messages, window ${windowSize}`,
              () => turn(store, id),
              {
                runs: 200,
                warmup: 20,
              },
            ),
          );
        }
        const sessions = Array.from({ length: 50 }, (_, index) => `concurrent-${index}`);
        const startedAt = performance.now();
        let turns = 0;
        await Promise.all(
          sessions.map(async (id) => {
            for (let round = 0; round < 10; round += 1) {
              await turn(store, id);
              turns += 1;
            }
          }),
        );
        const seconds = (performance.now() - startedAt) / 1000;
        lines.push(
          `session turns, ${kind.name}, 50 concurrent sessions: ${(turns / seconds).toFixed(0)} turns/s`,
        );
        lines.push(await windowMemory(kind.name, store));
      } finally {
        await store.close();
        await close();
      }
    }
    lines.push(...(await agentRuns()).map((row) => row));
  } finally {
    for (const kind of kinds) await kind.cluster?.destroy();
  }
  return { results, lines };
}

/** The parent's heap while a 10,000-message session is read through a 50-message window. */
async function windowMemory(name, store) {
  global.gc?.();
  const before = process.memoryUsage().heapUsed;
  const session = await store.open({ id: 'history-10000', actor: 'bench', lockTimeoutMs: 60_000 });
  const window = await session.history({ limit: windowSize });
  const during = process.memoryUsage().heapUsed;
  await session.release();
  const held = window.reduce((sum, record) => sum + record.message.length, 0);
  return `session window, ${name}: ${window.length} records (${(held / 1024).toFixed(0)} KiB of text) from a ${session.messageCount}-message session; heap grew ${((during - before) / mebibyte).toFixed(1)} MiB${global.gc ? '' : ' (run with --expose-gc for a steady figure)'}`;
}

/** A whole run with a scripted model, without and with a session in memory. */
async function agentRuns() {
  const sessionStore = memorySessionStore();
  const runtime = createRuntime({ sessionStore });
  const agent = () => defineAgent({ name: 'bench', model: new ScriptedModel([{ text: 'hi' }]) });
  const plain = await measure('run, one model turn, no session', () => agent().ask('?', { runtime }));
  let index = 0;
  const withSession = await measure('run, one model turn, memory session', () =>
    agent().ask('?', { runtime, session: { id: `run-${index++ % 20}`, actor: 'bench' } }),
  );
  await runtime.close();
  return [plain, withSession].map(
    (row) => `${row.name}: median ${row.median.toFixed(3)} ms, p90 ${row.p90.toFixed(3)} ms`,
  );
}

export function printSessionStoreFigures(figures) {
  printTable(figures.results);
  for (const line of figures.lines) console.log(line);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  printSessionStoreFigures(await sessionStoreFigures());
}
