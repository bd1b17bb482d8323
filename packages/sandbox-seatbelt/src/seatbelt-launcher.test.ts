import { spawnSync } from 'node:child_process';
import { ConfigurationError } from '@ghost/core';
import { describe, expect, it } from 'vitest';
import { launcherFailureStatus, rlimitScript, seatbeltLaunch } from './seatbelt-launcher.js';

const onLinux = process.platform === 'linux';

describe('rlimitScript', () => {
  it('sets each limit asked for, soft CPU before hard, and never a core file', () => {
    expect(rlimitScript({}).split('\n').map(command)).toEqual(['ulimit -c 0', 'exec "$@"']);
    expect(
      rlimitScript({
        cpuSeconds: 1.5,
        fileBytes: 1_000_000,
        openFiles: 64.9,
        wallSeconds: 3,
        memoryBytes: 1e9,
      })
        .split('\n')
        .map(command),
    ).toEqual([
      'ulimit -S -t 2',
      'ulimit -H -t 3',
      'ulimit -f 1953',
      'ulimit -n 64',
      'ulimit -c 0',
      'exec "$@"',
    ]);
  });

  it('names the limit and exits with its own status when the shell refuses one', () => {
    expect(rlimitScript({ openFiles: 10 })).toContain(
      `ulimit -n 10 || { echo 'ghost-seatbelt-launcher: could not set openFiles (ulimit -n 10)`,
    );
    expect(rlimitScript({ openFiles: 10 })).toContain(`exit ${launcherFailureStatus}; }`);
  });

  it('refuses a limit too large to write as an integer, with a ConfigurationError', () => {
    expect(() => rlimitScript({ fileBytes: 1e300 })).toThrow(ConfigurationError);
    expect(() => rlimitScript({ openFiles: 1e300 })).toThrow(/too large for the seatbelt launcher/);
  });
});

describe('seatbeltLaunch', () => {
  it('passes every string as an argument after the script, never inside it', () => {
    const launch = seatbeltLaunch({ openFiles: 8 }, { A: '$(x)' }, '/usr/bin/sandbox-exec', [
      '-p',
      "(version 1) ';",
    ]);
    expect(launch.command).toBe('/bin/sh');
    expect(launch.args).toEqual([
      '-c',
      rlimitScript({ openFiles: 8 }),
      'ghost-seatbelt-launcher',
      '/usr/bin/env',
      '-i',
      '--',
      'A=$(x)',
      '/usr/bin/sandbox-exec',
      '-p',
      "(version 1) ';",
    ]);
  });

  it.skipIf(!onLinux)(
    `gives the program exactly the environment, even names a shell would drop, and nothing the shell adds${onLinux ? '' : ' (skipped: reads GNU env -0 output)'}`,
    () => {
      const environment = {
        '-dash': 'v',
        'dotted.name': 'x',
        NEWLINE: 'a\nb',
        EMPTY: '',
        SHELLISH: '$(id) `id`',
      };
      // /usr/bin/env stands where sandbox-exec goes: a program, not a shell, that prints what it got.
      const launch = seatbeltLaunch({}, environment, '/usr/bin/env', ['-0']);
      const run = spawnSync(launch.command, launch.args, { env: {}, encoding: 'utf8' });
      expect(run.status).toBe(0);
      const printed = run.stdout.split('\0').slice(0, -1);
      expect(printed.sort()).toEqual(
        Object.entries(environment)
          .map(([name, value]) => `${name}=${value}`)
          .sort(),
      );
    },
  );
});

/** The ulimit or exec command of one script line, without its failure branch. */
function command(line: string): string {
  return line.replace(/ \|\| \{.*\}$/, '');
}
