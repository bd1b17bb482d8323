import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { expect } from 'vitest';
import { withoutWorkingDirectory } from './backend-environment.js';
import { type ConformanceCase, escapeCase } from './conformance-case.js';
import { environmentProbe, machineDetailsProbe } from './probes/identity-probes.js';

/** What the machine-details probe reports. */
interface MachineDetails {
  /** Null when the sandbox denies it. */
  readonly hostname: string | null;
  readonly commandLine: string | null;
  /**
   * By place (`process.env`, `/proc/self/environ`, `/proc/1/environ`), each entry followed by a
   * NUL; null where the place cannot be read.
   */
  readonly environments: Record<string, string | null>;
}

/**
 * Secrets in the parent's environment stay there (`environmentIsolation`), and details of the machine
 * (its name, the kernel command line) stay outside (`filesystemIsolation`). On `platform`s
 * without /proc (macOS) the probe's environment is `process.env` alone, and the machine has no
 * kernel command line to hide; the titles say so.
 */
export function environmentEscapeCases(platform: NodeJS.Platform): ConformanceCase[] {
  const hasProc = platform === 'linux';
  return [
    escapeCase({
      title: hasProc
        ? "a fake API key in the parent's environment reaches neither process.env nor /proc/*/environ"
        : "a fake API key in the parent's environment does not reach process.env (this machine has no /proc/*/environ)",
      needs: ['environmentIsolation'],
      run: async (harness) => {
        const secret = `sk-ghost-testkit-${randomBytes(12).toString('hex')}`;
        harness.setParentEnvironment('GHOST_TESTKIT_FAKE_KEY', secret);
        const run = await harness.runNode(environmentProbe(secret), { env: {} });
        const report = harness.report<{ env: Record<string, string>; cwd: string; leakedIn: string[] }>(run);
        expect(withoutWorkingDirectory(report.env, report.cwd)).toEqual({});
        expect(report.leakedIn).toEqual([]);
      },
    }),
    escapeCase({
      title: hasProc
        ? "the parent's working directory is in neither the process's environment nor its pid 1's (/proc/self/environ, /proc/1/environ)"
        : "the parent's working directory is not in the process's environment (process.env; this machine has no /proc/<pid>/environ)",
      needs: ['environmentIsolation'],
      // At / the value would be found in any PWD=/ and prove nothing.
      notApplicable: process.cwd() === '/' ? "the parent's working directory is /" : undefined,
      run: async (harness) => {
        const report = harness.report<MachineDetails>(await harness.runNode(machineDetailsProbe));
        const parentDirectory = `=${process.cwd()}\0`;
        const leaking = Object.entries(report.environments)
          .filter(([, environment]) => environment !== null && `${environment}\0`.includes(parentDirectory))
          .map(([place]) => place);
        expect(leaking, `environments naming ${process.cwd()}`).toEqual([]);
      },
    }),
    escapeCase({
      title: hasProc
        ? "the machine's name and the kernel command line are not visible"
        : "the machine's name is not visible (the kernel command line is Linux's /proc/cmdline)",
      needs: ['filesystemIsolation'],
      run: async (harness) => {
        const report = harness.report<MachineDetails>(await harness.runNode(machineDetailsProbe));
        expect(report.hostname, "the machine's name seen inside").not.toBe(hostname());
        if (!hasProc) return;
        const commandLine = (await readFile('/proc/cmdline', 'utf8')).trim();
        expect(report.commandLine ?? '', 'the kernel command line seen inside').not.toContain(commandLine);
      },
    }),
  ];
}
