// Opens a session of a SQLite store and holds it, taking orders on standard input, one per line:
// `write <text>` writes one message (prints { ok } or { code, reason }), `stall <ms>` blocks its
// thread that long (alive, but renewing nothing, as a process stuck in synchronous work), `release`
// releases, closes and exits. Prints `held` once it holds the session.
// node hold-session.mjs <path> <session id> <leaseMs>
import { createHash } from 'node:crypto';
import { createInterface } from 'node:readline';
import { sqliteSessionStore } from '@ghost/session-sqlite';

const [path, id, leaseMs] = process.argv.slice(2);
const store = sqliteSessionStore({ path, leaseMs: Number(leaseMs) });
const session = await store.open({ id, actor: 'holder', lockTimeoutMs: 10_000 });
process.stdout.write('held\n');
for await (const line of createInterface({ input: process.stdin })) {
  if (line.startsWith('write ')) {
    const message = JSON.stringify({ role: 'user', content: line.slice('write '.length) });
    const digest = createHash('sha256').update(message).digest('hex');
    try {
      await session.write({ operationId: `op-${digest}`, digest, messages: [message] });
      process.stdout.write(`${JSON.stringify({ ok: true })}\n`);
    } catch (error) {
      process.stdout.write(`${JSON.stringify({ code: error.code, reason: error.reason })}\n`);
    }
  } else if (line.startsWith('stall ')) {
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, Number(line.slice('stall '.length)));
  } else if (line === 'release') {
    await session.release();
    await store.close();
    process.exit(0);
  }
}
