import { rmSync } from 'node:fs';
import { chmod, mkdtemp, realpath } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { SandboxBackendV1 } from '@ghost/core';
import { afterAll, afterEach, describe, it } from 'vitest';
import { registerCases, type SuiteContext } from './conformance-case.js';
import { conformanceCaseGroups } from './conformance-case-groups.js';
import { compileNativeProbe } from './native-probe.js';
import { SandboxHarness } from './sandbox-harness.js';

/** The options of {@link describeSandboxConformance}. */
export interface SandboxConformanceOptions {
  /** The name in the suite's title, usually the backend's, such as `'bwrap'`. */
  readonly name: string;
  /** Makes the backend under test; called once, when the suite is registered. */
  readonly create: () => SandboxBackendV1 | Promise<SandboxBackendV1>;
  /**
   * What to do when `detect()` says the backend is unavailable here. Default `false`: register
   * one test that fails with the reason, so a CI machine that lost the backend cannot pass
   * quietly. `true`: register every case skipped, with the reason in its name, for machines
   * where the backend is not expected to work.
   */
  readonly skipWhenUnavailable?: boolean;
}

/**
 * Registers the sandbox conformance suite (vitest) for one `SandboxBackendV1`: the contract
 * (spawn, channels, bounded output, exit, kill, close, abort, typed errors for bad specs), then an
 * escape and abuse suite in which each case tries one escape or exhausts one limit and checks that
 * it was denied or bounded, that the parent stayed responsive, and that the next program runs.
 *
 * It creates the backend, awaits `detect()` and builds each spec from the capabilities the
 * backend declares. A case whose capability is not declared is registered with `it.skip` and
 * says why in its name; none is dropped silently. Cases that need raw system calls run a small
 * static C probe, compiled at start with the first of `$CC`, `cc`, `gcc`, `clang` that works;
 * without one they skip, saying so.
 *
 * Call it at the top level of a test file and await it. It runs on Linux and macOS: the outside
 * checks list processes with `ps`; the few cases whose subject only Linux has (pid namespaces,
 * /proc/sys, seccomp, mount options) skip elsewhere, saying so.
 *
 * @example
 * ```ts
 * // bwrap-conformance.test.ts
 * import { describeSandboxConformance } from '@ghost/sandbox-testkit';
 * import { bwrapSandbox } from './index.js';
 *
 * await describeSandboxConformance({ name: 'bwrap', create: () => bwrapSandbox });
 * ```
 */
export async function describeSandboxConformance(options: SandboxConformanceOptions): Promise<void> {
  const backend = await options.create();
  const detection = await backend.detect();
  const title = `sandbox backend '${options.name}' conformance`;
  const unavailableReason = detection.available
    ? undefined
    : `'${backend.name}' is not available here: ${detection.reason ?? 'detect() gave no reason'}`;

  if (unavailableReason !== undefined && options.skipWhenUnavailable !== true) {
    describe(title, () => {
      it('is available on this machine', () => {
        throw new Error(
          `${unavailableReason}. Pass skipWhenUnavailable: true where the backend is not expected to work.`,
        );
      });
    });
    return;
  }

  let harness: SandboxHarness | undefined;
  let nativeProbeMissingReason: string | undefined;
  let removeProbeDirectory = () => {};
  if (unavailableReason === undefined) {
    // A read-only runtime path of every spawn: the native probe lives here.
    const probeDirectory = await realpath(await mkdtemp(join(tmpdir(), 'ghost-testkit-probes-')));
    // Readable by everyone: with a root parent the backend may run probes as an unprivileged user.
    await chmod(probeDirectory, 0o755);
    removeProbeDirectory = () => rmSync(probeDirectory, { recursive: true, force: true });
    // afterAll does not run when a filter skips the whole suite; the exit hook still removes it.
    process.once('exit', removeProbeDirectory);
    const nativeProbe = await compileNativeProbe(probeDirectory);
    nativeProbeMissingReason = 'missingReason' in nativeProbe ? nativeProbe.missingReason : undefined;
    harness = new SandboxHarness({
      backend,
      capabilities: detection.capabilities,
      nodePath: await realpath(process.execPath),
      probeDirectory,
      nativeProbePath: 'path' in nativeProbe ? nativeProbe.path : undefined,
    });
  }

  const context: SuiteContext = {
    backendName: backend.name,
    platform: process.platform,
    capabilities: detection.capabilities,
    unavailableReason,
    nativeProbeMissingReason,
    harness: () => {
      if (harness === undefined)
        throw new Error('The backend is unavailable; this case should have been skipped.');
      return harness;
    },
  };

  describe(title, () => {
    // close() may wait seconds for each process it ends.
    afterEach(() => harness?.cleanup(), 30_000);
    afterAll(() => removeProbeDirectory());
    const [contract, ...escapes] = conformanceCaseGroups(context);
    describe(contract.name, () => registerCases(context, contract.cases));
    describe('escapes and abuse', () => {
      for (const group of escapes) describe(group.name, () => registerCases(context, group.cases));
    });
  });
}
