import { constants } from 'node:os';
import { expect } from 'vitest';
import { type ConformanceCase, escapeCase } from './conformance-case.js';
import { privilegesProbe } from './probes/identity-probes.js';

/** Attempts only a raw system call can make, and the privileges the process runs with (`syscallFilter`). */
export function syscallEscapeCases(): ConformanceCase[] {
  return [
    escapeCase({
      title: 'ptrace of its own child, its parent, pid 1 and the parent outside is denied',
      needs: ['syscallFilter', 'native probe'],
      linuxOnly: 'syscallFilter means a seccomp filter, which only Linux has',
      run: async (harness) => {
        const run = await harness.runNative('ptrace', ['1', String(process.pid)]);
        const report = harness.report<{ attempts: { target: string; pid: number; errno: number }[] }>(run);
        expect(report.attempts).toHaveLength(4);
        for (const attempt of report.attempts) {
          expect(attempt.errno, `ptrace of ${attempt.target} (pid ${attempt.pid}) succeeded`).not.toBe(0);
        }
      },
    }),
    escapeCase({
      title: 'no user namespace can be made, by unshare or by clone',
      needs: ['syscallFilter', 'native probe'],
      linuxOnly: 'user namespaces are a Linux feature',
      run: async (harness) => {
        const report = harness.report<{ unshare: number; clone: number }>(
          await harness.runNative('userns', [], { subprocesses: 'allow' }),
        );
        expect(report.unshare, 'errno of unshare(CLONE_NEWUSER) (0: made one)').not.toBe(0);
        expect(report.clone, 'errno of clone(CLONE_NEWUSER) (0: made one)').not.toBe(0);
      },
    }),
    escapeCase({
      title: 'TIOCSTI cannot push keystrokes into a terminal',
      needs: ['syscallFilter', 'native probe'],
      linuxOnly: 'syscallFilter means a seccomp filter, which only Linux has',
      run: async (harness) => {
        const report = harness.report<{ terminal: string; errno: number }>(
          await harness.runNative('tiocsti'),
        );
        expect(report.errno, `TIOCSTI on ${report.terminal} succeeded`).not.toBe(0);
      },
    }),
    escapeCase({
      title: "with network: 'none' only AF_UNIX sockets can be opened: raw, packet, TCP and UDP are denied",
      needs: ['syscallFilter', 'networkIsolation', 'native probe'],
      linuxOnly: 'syscallFilter means a seccomp filter, which only Linux has',
      run: async (harness) => {
        const run = await harness.runNative('sockets', [], { network: 'none' });
        const { sockets } = harness.report<{ sockets: Record<string, number> }>(run);
        expect(sockets.unix, `an AF_UNIX socket failed: ${errnoName(sockets.unix)}`).toBe(0);
        for (const [kind, errno] of Object.entries(sockets)) {
          if (kind !== 'unix') expect(errno, `a ${kind} socket was opened`).not.toBe(0);
        }
      },
    }),
    escapeCase({
      title:
        "runs with no new privileges, no capabilities in any set, and the parent's uid, or a non-root one when the parent is root",
      needs: ['syscallFilter'],
      linuxOnly: "no-new-privileges, capability sets and seccomp are Linux's, read from /proc/self/status",
      run: async (harness) => {
        const report = harness.report<Record<string, string | undefined>>(
          await harness.runNode(privilegesProbe),
        );
        expect(report.noNewPrivs).toBe('1');
        expect(report.seccomp, 'seccomp mode 2: a filter applies').toBe('2');
        for (const set of ['capEff', 'capPrm', 'capInh', 'capBnd', 'capAmb']) {
          expect(report[set], set).toMatch(/^0+$/);
        }
        const uids = report.uid?.split(/\s+/);
        const parentUid = process.getuid?.();
        if (parentUid === 0) {
          // Seen from inside; the identity cases compare with the view from outside.
          expect(uids, 'real, effective, saved and filesystem uid').toHaveLength(4);
          for (const uid of uids ?? []) expect(uid, 'a uid of the process').not.toBe('0');
        } else {
          const uid = String(parentUid);
          expect(uids, 'real, effective, saved and filesystem uid').toEqual([uid, uid, uid, uid]);
        }
      },
    }),
  ];
}

function errnoName(errno: number | undefined): string {
  const name = Object.entries(constants.errno).find(([, value]) => value === errno)?.[0];
  return name ?? String(errno);
}
