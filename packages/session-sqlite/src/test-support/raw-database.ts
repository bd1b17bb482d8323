import { pathToFileURL } from 'node:url';
import { type Client, createClient } from '@libsql/client';

/** A plain `@libsql/client` client on a store's file, to look at or damage it as another program would. */
export function rawDatabase(path: string): Client {
  return createClient({ url: pathToFileURL(path).href, timeout: 5_000 });
}
