import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

/**
 * The `file:` URL `@libsql/client` opens for a database path: the path made absolute and
 * percent-encoded, so spaces, `#`, `?`, `%` and any Unicode reach SQLite as the same path (the
 * client decodes each component; an unencoded `#` or `?` would start a fragment or a query).
 */
export function sqliteDatabaseUrl(path: string): string {
  return pathToFileURL(resolve(path)).href;
}
