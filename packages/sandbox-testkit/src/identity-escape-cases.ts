import { readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect } from 'vitest';
import { type ConformanceCase, escapeCase } from './conformance-case.js';
import { hostProcessIdentity } from './host-process-identity.js';
import { markedProcesses } from './host-processes.js';
import {
  identityProbe,
  setuidFileProbe,
  sysctlWriteProbe,
  workspaceMountProbe,
} from './probes/identity-probes.js';
import type { Attempt } from './probes/node-probe.js';

/** A kernel setting any root can change and nothing in the suite relies on: the write target. */
const sysctlPath = '/proc/sys/fs/lease-break-time';

/** Why the cases that only a root parent makes meaningful skip under any other. */
const needsRootParent = 'identity cases need a root parent';

const isRootParent = process.getuid?.() === 0;

/**
 * Who the sandboxed process runs as and what it could change on the host through that identity:
 * never real root (when the parent is root), no kernel settings, no set-user-id root file left in
 * the workspace, and a workspace mounted `nosuid,nodev` (`filesystemIsolation`).
 */
export function identityEscapeCases(): ConformanceCase[] {
  return [
    escapeCase({
      title:
        'with a root parent the process does not run as real root: its uids and gids, seen inside and from the host, are not 0',
      needs: ['filesystemIsolation'],
      notApplicable: isRootParent ? undefined : needsRootParent,
      run: async (harness) => {
        const marker = harness.marker();
        const child = await harness.spawnNode(identityProbe, {}, [marker]);
        await harness.waitForReady(child);
        // A launcher may carry the marker in its own arguments; the probe is the marked node.
        const probes = (await markedProcesses(marker)).filter((listed) =>
          listed.command.startsWith(`${harness.nodePath} `),
        );
        expect(probes, 'the marked node processes').toHaveLength(1);
        const probePid = probes[0]?.pid ?? 0;
        // ps shows the real, effective and saved ids on every platform.
        const listed = await hostProcessIdentity(probePid);
        expect(listed, `ps reports the probe (pid ${probePid})`).toBeDefined();
        expect(listed?.userIds, 'real, effective and saved uid seen from the host by ps').not.toContain(0);
        expect(listed?.groupIds, 'real and saved gid seen from the host by ps').not.toContain(0);
        if (process.platform === 'linux') {
          // /proc adds the effective and filesystem ids and the supplementary groups.
          const hostView = await readFile(`/proc/${probePid}/status`, 'utf8');
          const outside = { uid: ids(statusField(hostView, 'Uid')), gid: ids(statusField(hostView, 'Gid')) };
          expect(outside.uid, 'real, effective, saved and filesystem uid seen from the host').not.toContain(
            0,
          );
          expect(outside.gid, 'real, effective, saved and filesystem gid seen from the host').not.toContain(
            0,
          );
          expect(
            ids(statusField(hostView, 'Groups')),
            'supplementary groups seen from the host',
          ).not.toContain(0);
        }
        const report = harness.readyReport<{ uid: string; uidMap: string | null }>(child);
        // Inside, the uid may be 0 of a user namespace only if that namespace maps it elsewhere;
        // without a map (no user namespace, or no /proc as on macOS) it is the uid itself.
        const insideUid = ids(report.uid)[0] ?? 0;
        expect(
          report.uidMap === null ? insideUid : outsideOf(report.uidMap, insideUid),
          `uid ${insideUid} seen inside, as it is outside its user namespace`,
        ).not.toBe(0);
      },
    }),
    escapeCase({
      title: 'a write to /proc/sys fails and leaves the host kernel setting unchanged',
      needs: ['filesystemIsolation'],
      linuxOnly: "/proc/sys is Linux's interface to kernel settings",
      run: async (harness) => {
        const before = (await readFile(sysctlPath, 'utf8')).trim();
        // Should the write get through, the host gets its setting back after the case.
        harness.defer(async () => {
          if ((await readFile(sysctlPath, 'utf8')).trim() !== before) await writeFile(sysctlPath, before);
        });
        const run = await harness.runNode(sysctlWriteProbe(sysctlPath));
        const report = harness.report<{ read: Attempt; write: Attempt }>(run);
        expect(report.write, `the sandbox wrote ${sysctlPath}`).toMatchObject({ isAllowed: false });
        expect((await readFile(sysctlPath, 'utf8')).trim(), 'the host value').toBe(before);
      },
    }),
    escapeCase({
      title: 'a set-user-id file made in the workspace is not owned by root on the host',
      needs: ['filesystemIsolation'],
      notApplicable: isRootParent ? undefined : needsRootParent,
      run: async (harness) => {
        const workspace = await harness.hostDirectory('ghost-testkit-workspace-');
        const run = await harness.runNode(setuidFileProbe('escalate'), { workspace });
        const report = harness.report<{ create: Attempt; setuid: Attempt; setgid: Attempt }>(run);
        expect(report.create, 'the probe could not create a file in its workspace').toMatchObject({
          isAllowed: true,
        });
        const file = await stat(join(workspace, 'escalate'));
        expect(
          { setUserIdRoot: file.uid === 0 && (file.mode & 0o4000) !== 0 },
          `owner ${file.uid}, mode ${(file.mode & 0o7777).toString(8)}`,
        ).toEqual({ setUserIdRoot: false });
        expect(
          { setGroupIdRoot: file.gid === 0 && (file.mode & 0o2000) !== 0 },
          `group ${file.gid}, mode ${(file.mode & 0o7777).toString(8)}`,
        ).toEqual({ setGroupIdRoot: false });
      },
    }),
    escapeCase({
      title: 'the workspace is mounted nosuid and nodev',
      needs: ['filesystemIsolation'],
      linuxOnly: "the workspace's own mount, with options of its own, is made in a Linux mount namespace",
      run: async (harness) => {
        const run = await harness.runNode(workspaceMountProbe);
        const report = harness.report<{ cwd: string; mount?: { mountPoint: string; options: string[] } }>(
          run,
        );
        expect(report.mount, `no mount holds ${report.cwd}`).toBeDefined();
        expect(report.mount?.options, `the options of ${report.mount?.mountPoint}`).toEqual(
          expect.arrayContaining(['nosuid', 'nodev']),
        );
      },
    }),
  ];
}

/** A line of `/proc/<pid>/status`, such as `Uid`. */
function statusField(status: string, name: string): string {
  return new RegExp(`^${name}:\\s*(.*)$`, 'm').exec(status)?.[1] ?? '';
}

/** The numbers of a status line such as `Uid:  65534 65534 65534 65534`. */
function ids(line: string | undefined): number[] {
  return (line ?? '').split(/\s+/).filter(Boolean).map(Number);
}

/**
 * What `id` is one level out of its user namespace, by the namespace's `uid_map`
 * (`inside outside count` per line); undefined when it is not mapped or there is no map.
 */
function outsideOf(map: string | null, id: number): number | undefined {
  for (const line of (map ?? '').trim().split('\n')) {
    const [inside, outside, count] = line.trim().split(/\s+/).map(Number);
    if (inside === undefined || outside === undefined || count === undefined) continue;
    if (id >= inside && id < inside + count) return outside + (id - inside);
  }
  return undefined;
}
