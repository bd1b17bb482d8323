import { randomBytes } from 'node:crypto';
import { readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect } from 'vitest';
import { type ConformanceCase, escapeCase } from './conformance-case.js';
import { outsideProcessIdentity } from './outside-process-identity.js';
import { markedProcesses } from './outside-processes.js';
import {
  identityProbe,
  secretKeepingProbe,
  setuidFileProbe,
  sysctlWriteProbe,
  workspaceMountProbe,
} from './probes/identity-probes.js';
import type { Attempt } from './probes/node-probe.js';
import { runAsUser } from './run-as-user.js';
import type { SandboxHarness } from './sandbox-harness.js';

/** A kernel setting any root can change and nothing in the suite relies on: the write target. */
const sysctlPath = '/proc/sys/fs/lease-break-time';

/** Why the cases that only a root parent makes meaningful skip under any other. */
const needsRootParent = 'identity cases need a root parent';

const isRootParent = process.getuid?.() === 0;

/** Another local user, for the cases where one tries the planted program: no one the suite runs as. */
const otherLocalUser = { uid: 65533, gid: 65533 };

/** What the native probe's `reach` mode reports: an errno per path, and per pid per way in. */
interface ReachReport {
  readonly uid: number;
  readonly paths: Readonly<Record<string, number>>;
  readonly pids: Readonly<Record<string, Readonly<Record<string, number>>>>;
}

/** Every way in that the report shows got through (errno 0), such as `/proc/12/mem`. */
function reached(report: ReachReport): string[] {
  const through = Object.entries(report.paths)
    .filter(([, error]) => error === 0)
    .map(([path]) => path);
  for (const [pid, ways] of Object.entries(report.pids)) {
    for (const [way, error] of Object.entries(ways)) if (error === 0) through.push(`${way} of pid ${pid}`);
  }
  return through;
}

/** The second session and the first one's planted program, as the cross-session cases set them up. */
interface PlantedSetIdProgram {
  /** The planted copy's path outside, in the compromised host's workspace. */
  readonly path: string;
  /** Its owner and group outside: the identity it would give whoever runs it. */
  readonly owner: { readonly uid: number; readonly gid: number };
  /** The second session's host: its pid and its uids as seen from outside. */
  readonly victim: { readonly pid: number; readonly userIds: readonly number[] };
  /** The `reach` arguments aimed at the second session: its secret, a new file in its workspace, the workspace, its host. */
  readonly reachArguments: readonly string[];
}

/**
 * Starts a second session (a host keeping a secret in its workspace) and a compromised first one
 * whose native code copies itself into its workspace as a set-user-id, set-group-id program and
 * opens its workspace to every user, as a host that escaped its engine could.
 */
async function plantSetIdProgram(harness: SandboxHarness): Promise<PlantedSetIdProgram> {
  const marker = harness.marker();
  const victimWorkspace = await harness.workspace();
  const secret = `ghost-testkit-session-secret-${randomBytes(8).toString('hex')}`;
  const victim = await harness.spawnNode(secretKeepingProbe(secret), { workspace: victimWorkspace }, [
    marker,
  ]);
  await harness.waitForReady(victim);
  const victims = (await markedProcesses(marker)).filter((listed) =>
    listed.command.startsWith(`${harness.nodePath} `),
  );
  expect(victims, "the second session's host, found by its marker").toHaveLength(1);
  const victimPid = victims[0]?.pid ?? 0;
  const victimIdentity = await outsideProcessIdentity(victimPid);
  expect(victimIdentity, `ps reports the second session's host (pid ${victimPid})`).toBeDefined();

  const attackerWorkspace = await harness.workspace();
  const plant = await harness.runNative('plant', ['escalate'], { workspace: attackerWorkspace });
  const planted = harness.report<{ copy: number; setid: number }>(plant);
  expect(planted, `the compromised host could not plant its copy; stderr: ${plant.stderr}`).toMatchObject({
    copy: 0,
  });
  const path = join(attackerWorkspace, 'escalate');
  const file = await stat(path);
  return {
    path,
    owner: { uid: file.uid, gid: file.gid },
    victim: { pid: victimPid, userIds: victimIdentity?.userIds ?? [] },
    reachArguments: [
      'reach',
      join(victimWorkspace, 'secret'),
      `+${join(victimWorkspace, 'planted-by-another-session')}`,
      victimWorkspace,
      '--',
      String(victimPid),
    ],
  };
}

/**
 * Who the sandboxed process runs as and what it could change outside through that identity:
 * never real root (when the parent is root), no kernel settings, no set-user-id root file left in
 * the workspace, a set-user-id program planted by a compromised host that no other local user can
 * reach and whose identity reaches nothing of another session, and a workspace mounted
 * `nosuid,nodev` (`filesystemIsolation`).
 */
export function identityEscapeCases(): ConformanceCase[] {
  return [...ownIdentityCases(), ...setIdProgramCases()];
}

/**
 * What the process's own identity could change: it is not real root, changes no kernel setting,
 * and makes no set-user-id file owned by root.
 */
function ownIdentityCases(): ConformanceCase[] {
  return [
    escapeCase({
      title:
        'with a root parent the process does not run as real root: its uids and gids, seen inside and from outside, are not 0',
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
        const listed = await outsideProcessIdentity(probePid);
        expect(listed, `ps reports the probe (pid ${probePid})`).toBeDefined();
        expect(listed?.userIds, 'real, effective and saved uid seen from outside by ps').not.toContain(0);
        expect(listed?.groupIds, 'real and saved gid seen from outside by ps').not.toContain(0);
        if (process.platform === 'linux') {
          // /proc adds the effective and filesystem ids and the supplementary groups.
          const outsideView = await readFile(`/proc/${probePid}/status`, 'utf8');
          const outside = {
            uid: ids(statusField(outsideView, 'Uid')),
            gid: ids(statusField(outsideView, 'Gid')),
          };
          expect(outside.uid, 'real, effective, saved and filesystem uid seen from outside').not.toContain(0);
          expect(outside.gid, 'real, effective, saved and filesystem gid seen from outside').not.toContain(0);
          expect(
            ids(statusField(outsideView, 'Groups')),
            'supplementary groups seen from outside',
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
      title: "a write to /proc/sys fails and leaves the machine's kernel setting unchanged",
      needs: ['filesystemIsolation'],
      linuxOnly: "/proc/sys is Linux's interface to kernel settings",
      run: async (harness) => {
        const before = (await readFile(sysctlPath, 'utf8')).trim();
        // Should the write get through, the machine gets its setting back after the case.
        harness.defer(async () => {
          if ((await readFile(sysctlPath, 'utf8')).trim() !== before) await writeFile(sysctlPath, before);
        });
        const run = await harness.runNode(sysctlWriteProbe(sysctlPath));
        const report = harness.report<{ read: Attempt; write: Attempt }>(run);
        expect(report.write, `the sandbox wrote ${sysctlPath}`).toMatchObject({ isAllowed: false });
        expect((await readFile(sysctlPath, 'utf8')).trim(), "the machine's value").toBe(before);
      },
    }),
    escapeCase({
      title: 'a set-user-id file made in the workspace is not owned by root outside',
      needs: ['filesystemIsolation'],
      notApplicable: isRootParent ? undefined : needsRootParent,
      run: async (harness) => {
        const workspace = await harness.workspace();
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
  ];
}

/**
 * What a set-user-id program a compromised host plants in its workspace could give: nothing another
 * local user or a second session could use, and nothing at all on a workspace mounted `nosuid`.
 */
function setIdProgramCases(): ConformanceCase[] {
  return [
    escapeCase({
      title:
        'a set-user-id program a compromised host plants in its workspace cannot be run by another local user: it can reach neither it nor a second session',
      needs: ['filesystemIsolation', 'native probe'],
      notApplicable: isRootParent ? undefined : 'acting as another local user needs a root test process',
      run: async (harness) => {
        const planted = await plantSetIdProgram(harness);
        const run = await runAsUser(planted.path, planted.reachArguments, otherLocalUser);
        const through = run.started ? reached(JSON.parse(run.stdout) as ReachReport) : [];
        expect(
          { started: run.started, reached: through },
          `uid ${otherLocalUser.uid} ran ${planted.path} (owner ${planted.owner.uid}, mode set-user-id)`,
        ).toEqual({ started: false, reached: [] });
      },
    }),
    escapeCase({
      title:
        "the identity a planted set-user-id program would give is the parent's own, or one no other session has, which reaches nothing of a second session",
      needs: ['filesystemIsolation', 'native probe'],
      run: async (harness) => {
        const planted = await plantSetIdProgram(harness);
        const parentUid = process.getuid?.();
        if (planted.owner.uid === parentUid) {
          // The parent's own user gains nothing by running it; no one else can reach it (above).
          expect(planted.victim.userIds, "the second session's host runs as the parent too").toContain(
            parentUid,
          );
          return;
        }
        expect(planted.owner.uid, 'the planted owner is not root').not.toBe(0);
        expect(
          planted.victim.userIds,
          `the second session's host shares uid ${planted.owner.uid} with the compromised one`,
        ).not.toContain(planted.owner.uid);
        // Whoever ran the planted program would have its owner's identity: act as it directly.
        const run = await runAsUser(harness.nativeProbePath, planted.reachArguments, planted.owner);
        expect(run, `the probe could not start as uid ${planted.owner.uid}`).toMatchObject({ started: true });
        const report = JSON.parse(run.started ? run.stdout : '{}') as ReachReport;
        expect(report.uid).toBe(planted.owner.uid);
        expect(reached(report), `what uid ${planted.owner.uid} reached of the second session`).toEqual([]);
      },
    }),
    escapeCase({
      title:
        "another session's compromised host reaches neither the planted program nor a second session's workspace and host",
      needs: ['filesystemIsolation', 'native probe'],
      run: async (harness) => {
        const planted = await plantSetIdProgram(harness);
        const [mode, ...targets] = planted.reachArguments;
        const run = await harness.runNative(mode as string, [planted.path, ...targets]);
        const report = harness.report<ReachReport>(run);
        expect(reached(report), "what a third session's host reached").toEqual([]);
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
