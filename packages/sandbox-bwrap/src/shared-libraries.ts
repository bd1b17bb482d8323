import { execFile } from 'node:child_process';
import { realpath } from 'node:fs/promises';
import { isAbsolute } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

// ldd runs the dynamic loader once per binary; its answer does not change while we run.
const cache = new Map<string, Promise<readonly string[]>>();

/**
 * The absolute paths the dynamic loader opens to start `command`: its interpreter
 * (`/lib64/ld-linux-x86-64.so.2`) and every shared library, as `ldd` reports them. The sandbox
 * binds exactly these read-only at the same paths, so the program starts without the rest of
 * `/usr` being visible. A static binary has none.
 *
 * @throws Error when `ldd` is missing or reports a library it cannot find.
 */
export function sharedLibraries(command: string): Promise<readonly string[]> {
  let found = cache.get(command);
  if (found === undefined) {
    found = resolveSharedLibraries(command);
    cache.set(command, found);
    // A failure may be temporary (ldd being installed); let a later call retry.
    found.catch(() => cache.delete(command));
  }
  return found;
}

async function resolveSharedLibraries(command: string): Promise<readonly string[]> {
  const binary = await realpath(command);
  let stdout: string;
  try {
    ({ stdout } = await run('ldd', [binary], { env: {}, timeout: 10_000 }));
  } catch (error) {
    const output = `${(error as { stdout?: string }).stdout ?? ''}`;
    // ldd exits 1 for a static binary and says so; that binary needs nothing.
    if (/not a dynamic executable|statically linked/.test(output + String(error))) return [];
    throw new Error(`ldd could not list the shared libraries of ${binary}: ${(error as Error).message}`, {
      cause: error,
    });
  }
  if (/statically linked/.test(stdout)) return [];
  const missing = stdout.match(/^\s*(\S+) => not found/m);
  if (missing) throw new Error(`${binary} needs ${missing[1]}, which the dynamic loader cannot find.`);
  const paths = new Set<string>();
  for (const line of stdout.split('\n')) {
    // "libc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x…)" or "/lib64/ld-linux-x86-64.so.2 (0x…)"
    const path = line.match(/=>\s*(\/\S+)/)?.[1] ?? line.match(/^\s*(\/\S+)\s+\(/)?.[1];
    if (path !== undefined && isAbsolute(path)) paths.add(path);
  }
  return [...paths];
}
