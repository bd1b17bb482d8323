// Opens a SQLite store (which migrates the file) and writes one session, started by the test many
// times on a fresh file: each prints `ready` once loaded and starts on the line `go`, so all start
// at once. node open-store.mjs <path> <session id>
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { sqliteSessionStore } from '@ghost/session-sqlite';

const [path, id] = process.argv.slice(2);
const lines = createInterface({ input: process.stdin });
process.stdout.write('ready\n');
await once(lines, 'line');
lines.close();
const store = sqliteSessionStore({ path });
const message = JSON.stringify({ role: 'user', content: id });
const session = await store.open({ id, actor: 'starter', lockTimeoutMs: 10_000 });
const digest = createHash('sha256').update(message).digest('hex');
await session.write({ operationId: 'first', digest, messages: [message] });
await session.release();
await store.close();
process.stdout.write('done\n');
