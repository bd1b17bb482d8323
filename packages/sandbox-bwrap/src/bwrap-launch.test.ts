import { spawn } from 'node:child_process';
import type { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { launchCommand, parentGoneCode } from './bwrap-launch.js';
import { findExecutable } from './find-executable.js';

const bash = await findExecutable('bash');
const prlimit = await findExecutable('prlimit');
// The launcher is bash and prlimit (util-linux); a machine without them cannot run it at all, and
// the backend's detect() reports that, so here the cases skip and say why.
const missing = bash && prlimit ? '' : ' (skipped: bash or prlimit is not installed here)';

/**
 * Runs the launcher with /bin/sh standing in for bwrap, sends it `go` (or closes its go pipe
 * without a line, when `go` is null, as a parent that died would), and returns what sh printed
 * and how the launcher exited. The go pipe is the last one, at `3 + pipes`.
 */
function launch(
  script: string | readonly string[],
  options: {
    keepBelow: number;
    pipes: number;
    limits?: object;
    go?: string | null;
    programIdPositions?: { uid: number; gid: number };
  },
): Promise<{ output: string; code: number | null }> {
  const goFd = 3 + options.pipes;
  const [command, args] = launchCommand(
    {
      tools: { bash: bash!, prlimit: prlimit!, bwrap: '/bin/sh' },
      keepBelow: options.keepBelow,
      goFd,
      cgroupJoinFiles: [],
      limits: options.limits ?? {},
      ...(options.programIdPositions === undefined ? {} : { programIdPositions: options.programIdPositions }),
    },
    typeof script === 'string' ? ['-c', script] : script,
  );
  const child = spawn(command, args, {
    env: {},
    stdio: ['ignore', 'pipe', 'pipe', ...Array.from({ length: options.pipes + 1 }, () => 'pipe' as const)],
  });
  const go = child.stdio[goFd] as Writable;
  if (options.go === null) go.end();
  else go.end(`${options.go ?? '-1'}\n`);
  return new Promise((resolve, reject) => {
    let output = '';
    child.stdout!.on('data', (chunk) => (output += chunk));
    child.on('error', reject);
    child.on('close', (code) => resolve({ output, code }));
  });
}

describe('the launcher', () => {
  it.skipIf(!bash || !prlimit)(
    `closes every descriptor from keepBelow up, so nothing inherited by accident reaches the sandbox${missing}`,
    async () => {
      const { output } = await launch(
        'for n in 3 4 5 6; do [ -e /proc/self/fd/$n ] && echo "open $n"; done; true',
        { keepBelow: 4, pipes: 3 },
      );
      // fd 6 is the go pipe, closed too.
      expect(output.trim().split('\n')).toEqual(['open 3']);
    },
  );

  it.skipIf(!bash || !prlimit)(
    `starts bubblewrap with an empty environment: not even bash's PWD, SHLVL or _ reach it${missing}`,
    async () => {
      // /proc/self/environ is the environment the program was started with, whatever sh adds later.
      const { output } = await launch("tr '\\0' '\\n' < /proc/self/environ; echo end", {
        keepBelow: 3,
        pipes: 0,
      });
      expect(output).toBe('end\n');
    },
  );

  it.skipIf(!bash || !prlimit)(
    `sets the rlimits it is given, and never allows a core file${missing}`,
    async () => {
      const { output } = await launch('ulimit -t; ulimit -n; ulimit -c; ulimit -f', {
        keepBelow: 3,
        pipes: 0,
        limits: { cpuSeconds: 7, openFiles: 99, fileBytes: 10_240 },
      });
      // sh reports file size in 512-byte blocks: 10,240 bytes are 20 blocks.
      expect(output.trim().split('\n')).toEqual(['7', '99', '0', '20']);
    },
  );

  it.skipIf(!bash || !prlimit)(
    `starts nothing when its go pipe closes without a line, as when the parent died before sending it${missing}`,
    async () => {
      const { output, code } = await launch('echo started', { keepBelow: 3, pipes: 0, go: null });
      expect({ output, code }).toEqual({ output: '', code: parentGoneCode });
    },
  );

  it.skipIf(!bash || !prlimit)(
    `writes the id it is sent where setpriv's --reuid and --regid wait for it, and nowhere else${missing}`,
    async () => {
      const script = ['-c', 'echo "$0 $1 $2"', '--reuid=unset', '--regid=unset', '--reuid=unset'];
      const { output } = await launch(script, {
        keepBelow: 3,
        pipes: 0,
        go: '2113934567',
        programIdPositions: { uid: 2, gid: 3 },
      });
      expect(output).toBe('--reuid=2113934567 --regid=2113934567 --reuid=unset\n');
      const refused = await launch(script, {
        keepBelow: 3,
        pipes: 0,
        go: 'not-an-id',
        programIdPositions: { uid: 2, gid: 3 },
      });
      expect(refused.output).toBe('');
      expect(refused.code).not.toBe(0);
    },
  );
});
