import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { describe, expect, it } from 'vitest';
import {
  environmentEntriesIn,
  environmentListingArguments,
  listProcessEnvironment,
} from './outside-process-environment.js';

describe('environmentListingArguments', () => {
  it("asks macOS's ps with -E and procps with e, the flag each takes for the environment", () => {
    expect(environmentListingArguments('darwin', 512)).toEqual(['-E', '-ww', '-o', 'command=', '-p', '512']);
    expect(environmentListingArguments('linux', 512)).toEqual(['e', '-ww', '-o', 'command=', '-p', '512']);
  });
});

describe('environmentEntriesIn', () => {
  it("finds a process's entries in a listing in macOS's ps -E format, leaving out short values", () => {
    // ps -E on macOS: the command line, then NAME=value pairs, separated by spaces.
    const listing =
      '/usr/local/bin/node -e setInterval(()=>{},1000) GHOST_SECRET=sk-0123456789 TERM=xterm HOME=/Users/ada\n';
    expect(
      environmentEntriesIn(listing, {
        GHOST_SECRET: 'sk-0123456789',
        TERM: 'xterm',
        HOME: '/Users/ada',
        PATH: '/usr/bin:/bin',
      }),
    ).toEqual(['GHOST_SECRET=sk-0123456789', 'HOME=/Users/ada']);
  });
});

describe('listProcessEnvironment, with the real ps of this machine', () => {
  it("shows a child's starting environment", async () => {
    const environment = { GHOST_TESTKIT_SECRET: `secret-${process.pid}-environment` };
    const child = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], {
      env: environment,
      stdio: 'ignore',
    });
    try {
      await once(child, 'spawn');
      const listing = await listProcessEnvironment(child.pid ?? 0);
      expect(environmentEntriesIn(listing, environment)).toEqual([
        `GHOST_TESTKIT_SECRET=${environment.GHOST_TESTKIT_SECRET}`,
      ]);
    } finally {
      child.kill('SIGKILL');
    }
  });
});
