import type { SandboxCapabilities } from '@ghost/core/sandbox';
import { describe, expect, it } from 'vitest';
import { type SuiteContext, skipReasonFor } from './conformance-case.js';
import { conformanceCaseGroups } from './conformance-case-groups.js';

const everyCapability: SandboxCapabilities = {
  processTreeOwnership: true,
  subprocessDenial: true,
  networkIsolation: true,
  filesystemIsolation: true,
  memoryLimit: true,
  cpuLimit: true,
  fileSizeLimit: true,
  openFilesLimit: true,
  processLimit: true,
  syscallFilter: true,
  environmentIsolation: true,
};

function suiteOn(platform: NodeJS.Platform, capabilities = everyCapability): SuiteContext {
  return {
    backendName: 'test',
    platform,
    capabilities,
    unavailableReason: undefined,
    nativeProbeMissingReason: undefined,
    harness: () => {
      throw new Error('no case runs in this test');
    },
  };
}

/** Each case's title, why it skips (undefined: it runs) and whether it is moot here, in registration order. */
function plan(context: SuiteContext): { title: string; skip: string | undefined; isMoot: boolean }[] {
  return conformanceCaseGroups(context).flatMap((group) =>
    group.cases.map((testCase) => ({
      title: testCase.title,
      skip: skipReasonFor(context, testCase),
      isMoot: testCase.notApplicable !== undefined,
    })),
  );
}

/** The cases whose subject only Linux has: the only ones a macOS machine skips for its platform. */
const linuxOnlyTitles = [
  "a write to /proc/sys fails and leaves the machine's kernel setting unchanged",
  'the workspace is mounted nosuid and nodev',
  'pid 1 of the sandbox is out of reach: its /proc/1/mem and /proc/1/environ and pidfd_getfd of its descriptors fail',
  'ptrace of its own child, its parent, pid 1 and the parent outside is denied',
  'no user namespace can be made, by unshare or by clone',
  'TIOCSTI cannot push keystrokes into a terminal',
  "with network: 'none' only AF_UNIX sockets can be opened: raw, packet, TCP and UDP are denied",
  "runs with no new privileges, no capabilities in any set, and the parent's uid, or a non-root one when the parent is root",
];

describe('which cases run on macOS', () => {
  it('skips for the platform only the cases whose subject is Linux, each saying why, and nothing for /proc', () => {
    const onMac = plan(suiteOn('darwin'));
    const skippedForPlatform = onMac.filter((entry) => entry.skip?.startsWith('Linux only: '));
    expect(skippedForPlatform.map((entry) => entry.title)).toEqual(linuxOnlyTitles);
    for (const entry of skippedForPlatform)
      expect(entry.skip).toMatch(/^Linux only: .+; this machine is darwin$/);
    // Every other skip is a case moot on any platform (the contract's "rejects ... when it cannot"
    // cases when all is declared, root-parent cases under another user), never one for /proc.
    const otherSkips = onMac.filter(
      (entry) => entry.skip !== undefined && !entry.skip.startsWith('Linux only: '),
    );
    expect(otherSkips.filter((entry) => !entry.isMoot)).toEqual([]);
    expect(otherSkips.map((entry) => entry.skip)).toEqual(
      expect.arrayContaining([
        "'test' declares subprocessDenial; the escape suite tests it",
        "'test' declares networkIsolation; the escape suite tests it",
        "'test' declares every limit; the escape suite hits them",
      ]),
    );
  });

  it('runs every case on Linux that it runs on macOS, and the Linux-only ones besides', () => {
    const onLinux = plan(suiteOn('linux'));
    const onMac = plan(suiteOn('darwin'));
    expect(onLinux).toHaveLength(onMac.length);
    expect(onLinux.filter((entry) => entry.skip?.startsWith('Linux only: '))).toEqual([]);
    const runningOnLinux = onLinux.filter((entry) => entry.skip === undefined).length;
    const runningOnMac = onMac.filter((entry) => entry.skip === undefined).length;
    expect(runningOnLinux - runningOnMac).toBe(linuxOnlyTitles.length);
  });

  it('gives macOS its own titles for the environment cases, naming what it checks there', () => {
    const titles = plan(suiteOn('darwin')).map((entry) => entry.title);
    expect(titles).toContain(
      "the parent's working directory is not in the process's environment (process.env; this machine has no /proc/<pid>/environ)",
    );
    expect(titles).toContain(
      "the machine's name is not visible (the kernel command line is Linux's /proc/cmdline)",
    );
  });

  it("with seatbelt's capabilities (a non-root parent), skips only for what seatbelt does not declare and what is Linux's", () => {
    // As @ghost/sandbox-seatbelt's detect() reports them on macOS: no process tree ownership,
    // process limit or seccomp-style filter.
    const seatbelt: SandboxCapabilities = {
      ...everyCapability,
      processTreeOwnership: false,
      processLimit: false,
      syscallFilter: false,
    };
    const skips = plan(suiteOn('darwin', seatbelt))
      .map((entry) => entry.skip)
      .filter((skip) => skip !== undefined);
    for (const skip of skips) {
      expect(skip).toMatch(
        /^(Linux only: |'test' does not declare |'test' declares )|root parent|working directory is \//,
      );
    }
    expect(skips.join('\n')).not.toMatch(/native probe|\/proc, and this machine/);
  });
});
