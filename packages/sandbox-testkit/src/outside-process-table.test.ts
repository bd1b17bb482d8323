import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { describe, expect, it } from 'vitest';
import { listOutsideProcesses, parseProcessTable } from './outside-process-table.js';
import { killProcessesWithMarker, processesWithMarker } from './outside-processes.js';

describe('parseProcessTable', () => {
  it("reads a listing in macOS's format (BSD ps: right-aligned ids, multi-letter states, names of others' processes in parentheses)", () => {
    // Recorded from `ps -A -ww -o pid=,ppid=,pgid=,uid=,state=,command=` on macOS 14.
    const listing = [
      '    1     0     1     0 Ss   /sbin/launchd',
      '  322     1   322     0 Ss   /usr/libexec/logd',
      '  511     1   511   205 Ss   (locationd)',
      ' 4127  4120  4127   501 S+   /Users/ada/.nvm/versions/node/v22.11.0/bin/node -e process.stdin.resume() ghost-testkit-marker-7f3c',
      ' 4133  4127  4127   501 Z+   <defunct>',
      '98765  4127 98765   501 R    /usr/bin/sandbox-exec -p (version 1) (deny default) /usr/local/bin/node',
      '',
    ].join('\n');
    expect(parseProcessTable(listing)).toEqual([
      { pid: 1, parentPid: 0, groupId: 1, userId: 0, isZombie: false, command: '/sbin/launchd' },
      { pid: 322, parentPid: 1, groupId: 322, userId: 0, isZombie: false, command: '/usr/libexec/logd' },
      { pid: 511, parentPid: 1, groupId: 511, userId: 205, isZombie: false, command: '(locationd)' },
      {
        pid: 4127,
        parentPid: 4120,
        groupId: 4127,
        userId: 501,
        isZombie: false,
        command:
          '/Users/ada/.nvm/versions/node/v22.11.0/bin/node -e process.stdin.resume() ghost-testkit-marker-7f3c',
      },
      { pid: 4133, parentPid: 4127, groupId: 4127, userId: 501, isZombie: true, command: '<defunct>' },
      {
        pid: 98765,
        parentPid: 4127,
        groupId: 98765,
        userId: 501,
        isZombie: false,
        command: '/usr/bin/sandbox-exec -p (version 1) (deny default) /usr/local/bin/node',
      },
    ]);
  });

  it("reads a listing in procps's format (Linux: one-letter states, kernel threads in brackets) and skips lines of another shape", () => {
    const listing = [
      '      1       0       1       0 S /sbin/init splash',
      '      2       0       0       0 S [kthreadd]',
      '   2210    2209    2210   65534 Z [node] <defunct>',
      'PID PPID PGID UID S COMMAND',
      'ps: warning: something',
      '   12 x 3 4 S nonsense',
    ].join('\n');
    expect(parseProcessTable(listing)).toEqual([
      { pid: 1, parentPid: 0, groupId: 1, userId: 0, isZombie: false, command: '/sbin/init splash' },
      { pid: 2, parentPid: 0, groupId: 0, userId: 0, isZombie: false, command: '[kthreadd]' },
      {
        pid: 2210,
        parentPid: 2209,
        groupId: 2210,
        userId: 65534,
        isZombie: true,
        command: '[node] <defunct>',
      },
    ]);
  });
});

describe('listOutsideProcesses, with the real ps of this machine', () => {
  it('finds this process with its parent, group, uid and full command line', async () => {
    const own = (await listOutsideProcesses()).find((listed) => listed.pid === process.pid);
    expect(own).toMatchObject({ parentPid: process.ppid, userId: process.geteuid?.(), isZombie: false });
    // The command line as the process was started: argv[0] as given, Node's options, the script and its arguments.
    expect(own?.command).toBe([process.argv0, ...process.execArgv, ...process.argv.slice(1)].join(' '));
  });

  it('finds a child by a marker placed after 64 KiB of arguments, and no longer once it is killed', async () => {
    const marker = `ghost-testkit-marker-${randomUUID()}`;
    const child = spawn(
      process.execPath,
      ['-e', 'setInterval(() => {}, 1000)', 'x'.repeat(64 * 1024), marker],
      {
        stdio: 'ignore',
      },
    );
    try {
      await once(child, 'spawn');
      expect(await processesWithMarker(marker)).toEqual([child.pid]);
      await killProcessesWithMarker(marker);
      await once(child, 'exit');
      expect(await processesWithMarker(marker)).toEqual([]);
    } finally {
      child.kill('SIGKILL');
    }
  });

  it('rejects, naming ps and how to install it, when ps cannot run', async () => {
    await expect(listOutsideProcesses('/nonexistent/ps')).rejects.toThrow(/\/nonexistent\/ps.*Install ps/);
  });
});
