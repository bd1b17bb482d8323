// Opens a SQLite store (which migrates the file) and writes one session, started by the test many
// times at once on a fresh file: node open-store.mjs <path> <session id>
import { createHash } from 'node:crypto';
import { sqliteSessionStore } from '@ghost/session-sqlite';

const [path, id] = process.argv.slice(2);
const store = sqliteSessionStore({ path });
const message = JSON.stringify({ role: 'user', content: id });
const session = await store.open({ id, actor: 'starter', lockTimeoutMs: 10_000 });
const digest = createHash('sha256').update(message).digest('hex');
await session.write({ operationId: 'first', digest, messages: [message] });
await session.release();
await store.close();
process.stdout.write('done\n');
