// Holds the write lock of a SQLite file, as another program writing to it would: opens a write
// transaction, prints `locked`, and rolls it back after <holdMs> milliseconds or on the line
// `release`, whichever comes first (then prints `released` and exits).
// node hold-write-lock.mjs <path> <holdMs>
import { createInterface } from 'node:readline';
import { pathToFileURL } from 'node:url';
import { createClient } from '@libsql/client';

const [path, holdMs] = process.argv.slice(2);
const client = createClient({ url: pathToFileURL(path).href });
const transaction = await client.transaction('write');
process.stdout.write('locked\n');
let isReleased = false;
const release = async () => {
  if (isReleased) return;
  isReleased = true;
  await transaction.rollback();
  client.close();
  process.stdout.write('released\n');
  process.exit(0);
};
setTimeout(release, Number(holdMs));
for await (const line of createInterface({ input: process.stdin })) {
  if (line === 'release') await release();
}
