import type { SandboxCapabilities } from '@ghost/core/sandbox';
import { expect, it } from 'vitest';
import { OutsideHeartbeat, timerLateness } from './outside-heartbeat.js';
import type { SandboxHarness } from './sandbox-harness.js';

/** What a case needs of the machine running the suite, rather than of the backend. */
const machineRequirements = ['native probe'] as const;

/** What a case needs to be meaningful: a capability the backend declares, or the compiled native probe. */
type Requirement = keyof SandboxCapabilities | (typeof machineRequirements)[number];

/** One `it` of the suite. */
export interface ConformanceCase {
  readonly title: string;
  readonly needs?: readonly Requirement[];
  /**
   * Set on a case whose subject exists only on Linux (a pid namespace, /proc/sys, seccomp, a
   * mount's options): why, for the title of the skipped case on any other machine. Checks from
   * outside are portable (`ps`, the native probe), so no case is Linux-only merely for them.
   */
  readonly linuxOnly?: string;
  /** Why the case does not apply to this backend, for reasons other than `needs`; skips it. */
  readonly notApplicable?: string | undefined;
  readonly run: (harness: SandboxHarness) => Promise<void>;
}

/** What deciding whether a case runs needs to know. */
export interface SuiteContext {
  readonly backendName: string;
  /** The machine's platform, `process.platform` outside tests of the suite itself. */
  readonly platform: NodeJS.Platform;
  readonly capabilities: SandboxCapabilities;
  /** Set when the backend is unavailable and the caller asked to skip: every case skips with it. */
  readonly unavailableReason: string | undefined;
  /** Why there is no native probe, when there is none. */
  readonly nativeProbeMissingReason: string | undefined;
  /** The harness; only called from inside a running case. */
  readonly harness: () => SandboxHarness;
}

/** The longest the parent's event loop may stall during an attack before the case fails. */
const longestOutsideLagMilliseconds = 1_000;

/** Each case's timeout, set here so a backend's own vitest defaults cannot cut a limit case short. */
const caseTimeoutMilliseconds = 20_000;

/**
 * Registers each case with `it`, or with `it.skip` and the reason in its title, so a case that
 * does not apply is visible in the report and never silently dropped.
 */
export function registerCases(context: SuiteContext, cases: readonly ConformanceCase[]): void {
  for (const testCase of cases) {
    const skipReason = skipReasonFor(context, testCase);
    if (skipReason !== undefined) {
      it.skip(`${testCase.title} (skipped: ${skipReason})`, () => {});
      continue;
    }
    it(testCase.title, () => testCase.run(context.harness()), caseTimeoutMilliseconds);
  }
}

/** Why `testCase` is registered skipped in `context`, or undefined when it runs. */
export function skipReasonFor(context: SuiteContext, testCase: ConformanceCase): string | undefined {
  if (context.unavailableReason !== undefined) return context.unavailableReason;
  if (testCase.notApplicable !== undefined) return testCase.notApplicable;
  if (testCase.linuxOnly !== undefined && context.platform !== 'linux') {
    return `Linux only: ${testCase.linuxOnly}; this machine is ${context.platform}`;
  }
  const needs = testCase.needs ?? [];
  const undeclared = needs.filter((need) => !isMachineRequirement(need) && !context.capabilities[need]);
  if (undeclared.length > 0) return `'${context.backendName}' does not declare ${undeclared.join(', ')}`;
  if (needs.includes('native probe') && context.nativeProbeMissingReason !== undefined) {
    return context.nativeProbeMissingReason;
  }
  return undefined;
}

function isMachineRequirement(need: Requirement): need is (typeof machineRequirements)[number] {
  return (machineRequirements as readonly string[]).includes(need);
}

/**
 * An escape or abuse case: besides its own check that the attempt was denied or bounded, it
 * asserts that the parent stayed healthy during it (its event loop kept ticking, a fresh timer fires
 * on time) and that the next program still runs.
 */
export function escapeCase(testCase: ConformanceCase): ConformanceCase {
  return {
    ...testCase,
    run: async (harness) => {
      const heartbeat = new OutsideHeartbeat();
      heartbeat.start();
      let longestLag: number;
      try {
        await testCase.run(harness);
      } finally {
        longestLag = heartbeat.stop();
      }
      expect(longestLag, "the parent's event loop stalled during the attempt (ms)").toBeLessThan(
        longestOutsideLagMilliseconds,
      );
      expect(await timerLateness(), "a parent's timer fired late after the attempt (ms)").toBeLessThan(
        longestOutsideLagMilliseconds,
      );
      await harness.expectNextProgramRuns();
    },
  };
}
