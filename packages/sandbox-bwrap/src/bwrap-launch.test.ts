import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { launchCommand } from './bwrap-launch.js';
import { findExecutable } from './find-executable.js';

const bash = await findExecutable('bash');
const prlimit = await findExecutable('prlimit');
// The launcher is bash and prlimit (util-linux); a machine without them cannot run it at all, and
// the backend's detect() reports that, so here the cases skip and say why.
const missing = bash && prlimit ? '' : ' (skipped: bash or prlimit is not installed here)';

/** Runs the launcher with /bin/sh standing in for bwrap, and returns what sh printed. */
function launch(
  script: string,
  options: { keepBelow: number; pipes: number; limits?: object },
): Promise<string> {
  const [command, args] = launchCommand(
    {
      tools: { bash: bash!, prlimit: prlimit!, bwrap: '/bin/sh' },
      keepBelow: options.keepBelow,
      cgroupJoinFiles: [],
      limits: options.limits ?? {},
    },
    ['-c', script],
  );
  const child = spawn(command, args, {
    env: {},
    stdio: ['ignore', 'pipe', 'pipe', ...Array.from({ length: options.pipes }, () => 'pipe' as const)],
  });
  return new Promise((resolve, reject) => {
    let output = '';
    child.stdout!.on('data', (chunk) => (output += chunk));
    child.on('error', reject);
    child.on('close', () => resolve(output));
  });
}

describe('the launcher', () => {
  it.skipIf(!bash || !prlimit)(
    `closes every descriptor from keepBelow up, so nothing inherited by accident reaches the sandbox${missing}`,
    async () => {
      const output = await launch(
        'for n in 3 4 5; do [ -e /proc/self/fd/$n ] && echo "open $n"; done; true',
        { keepBelow: 4, pipes: 3 },
      );
      expect(output.trim().split('\n')).toEqual(['open 3']);
    },
  );

  it.skipIf(!bash || !prlimit)(
    `starts bubblewrap with an empty environment: not even bash's PWD, SHLVL or _ reach it${missing}`,
    async () => {
      // /proc/self/environ is the environment the program was started with, whatever sh adds later.
      const output = await launch("tr '\\0' '\\n' < /proc/self/environ; echo end", {
        keepBelow: 3,
        pipes: 0,
      });
      expect(output).toBe('end\n');
    },
  );

  it.skipIf(!bash || !prlimit)(
    `sets the rlimits it is given, and never allows a core file${missing}`,
    async () => {
      const output = await launch('ulimit -t; ulimit -n; ulimit -c; ulimit -f', {
        keepBelow: 3,
        pipes: 0,
        limits: { cpuSeconds: 7, openFiles: 99, fileBytes: 10_240 },
      });
      // sh reports file size in 512-byte blocks: 10,240 bytes are 20 blocks.
      expect(output.trim().split('\n')).toEqual(['7', '99', '0', '20']);
    },
  );
});
