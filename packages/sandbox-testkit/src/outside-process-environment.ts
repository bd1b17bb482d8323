import { execFile } from 'node:child_process';
import { psPath } from './outside-process-table.js';

/**
 * The `ps` arguments that print process `pid`'s command line followed by its environment (as it
 * was when the process started): `-E` on macOS's BSD `ps`, the BSD-style `e` on procps (Linux),
 * which refuses `-E`.
 */
export function environmentListingArguments(platform: NodeJS.Platform, pid: number): string[] {
  const showEnvironment = platform === 'linux' ? 'e' : '-E';
  return [showEnvironment, '-ww', '-o', 'command=', '-p', String(pid)];
}

/**
 * Process `pid`'s command line and starting environment as `ps` on this machine shows them: the view
 * of the parent's environment a sandboxed program must not get where there is no
 * `/proc/<pid>/environ` to try (macOS).
 */
export function listProcessEnvironment(pid: number, ps: string = psPath): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(
      ps,
      environmentListingArguments(process.platform, pid),
      { env: {}, timeout: 10_000, maxBuffer: 16 * 1024 * 1024 },
      (error, stdout) => {
        if (error === null) resolve(stdout);
        else
          reject(
            new Error(`${ps} could not list process ${pid}'s environment: ${error.message}`, {
              cause: error,
            }),
          );
      },
    );
  });
}

/**
 * The entries of `environment` (`NAME=value`) that `listing` shows, leaving out short values, which
 * could turn up by chance: what proves a listing holds that environment.
 */
export function environmentEntriesIn(listing: string, environment: NodeJS.ProcessEnv): string[] {
  return Object.entries(environment)
    .filter(([, value]) => value !== undefined && value.length >= 8)
    .map(([name, value]) => `${name}=${value}`)
    .filter((entry) => listing.includes(entry));
}
