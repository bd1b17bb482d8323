import { randomBytes } from 'node:crypto';
import { expect } from 'vitest';
import { withoutWorkingDirectory } from './backend-environment.js';
import { type ConformanceCase, escapeCase } from './conformance-case.js';
import { environmentProbe } from './probes/identity-probes.js';

/** Secrets in the parent's environment stay there (`environmentIsolation`). */
export function environmentEscapeCases(): ConformanceCase[] {
  return [
    escapeCase({
      title: "a fake API key in the parent's environment reaches neither process.env nor /proc/*/environ",
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
  ];
}
