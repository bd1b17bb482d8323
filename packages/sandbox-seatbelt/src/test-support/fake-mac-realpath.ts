import { posix } from 'node:path';

/** A file system described for a test: the paths that exist and the symbolic links among them. */
export interface FakeMacFileSystem {
  /** Paths that exist (files or directories); their parent directories exist too. */
  readonly existing: readonly string[];
  /** Symbolic links: where each is, and what it holds (absolute, or relative to its directory). */
  readonly links?: Readonly<Record<string, string>>;
}

/** The links every Mac has at the top of its file system. */
const macTopLinks = { '/tmp': 'private/tmp', '/var': 'private/var', '/etc': 'private/etc' };

/**
 * A `realpath` over a described file system, resolving links one component at a time as
 * `realpath(3)` does on macOS (`/tmp`, `/var` and `/etc` lead into `/private` unless the test says
 * otherwise): `ENOENT` for a path that does not exist, `ELOOP` for a cycle of links. It also
 * records every path it was asked about.
 */
export function fakeMacRealpath(fileSystem: FakeMacFileSystem): ((path: string) => string) & {
  readonly asked: string[];
} {
  const links: Record<string, string> = { ...macTopLinks, ...fileSystem.links };
  const existing = new Set<string>(['/']);
  for (const path of [...fileSystem.existing, ...Object.keys(links)]) {
    let current = path;
    while (current !== '/') {
      existing.add(current);
      current = posix.dirname(current);
    }
  }
  const asked: string[] = [];
  const realpath = (path: string): string => {
    asked.push(path);
    let resolved = '/';
    const pending = path.split('/').filter((part) => part !== '' && part !== '.');
    let hops = 0;
    while (pending.length > 0) {
      const part = pending.shift() as string;
      if (part === '..') {
        resolved = posix.dirname(resolved);
        continue;
      }
      const next = resolved === '/' ? `/${part}` : `${resolved}/${part}`;
      const target = links[next];
      if (target !== undefined) {
        hops += 1;
        if (hops > 32)
          throw Object.assign(new Error(`ELOOP: too many links, realpath '${path}'`), { code: 'ELOOP' });
        if (target.startsWith('/')) resolved = '/';
        pending.unshift(...target.split('/').filter((piece) => piece !== '' && piece !== '.'));
        continue;
      }
      if (!existing.has(next)) {
        throw Object.assign(new Error(`ENOENT: no such file or directory, realpath '${path}'`), {
          code: 'ENOENT',
        });
      }
      resolved = next;
    }
    return resolved;
  };
  return Object.assign(realpath, { asked });
}
