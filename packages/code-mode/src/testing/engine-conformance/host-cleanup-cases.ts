import { defineTool } from '@ghost/core';
import { Type } from 'typebox';
import { describe, expect } from 'vitest';
import { leftoverEntries } from '../../open-code-mode-session.js';
import { descendantProcesses } from '../child-processes.js';
import { itWithPrograms } from './case-programs.js';
import type { ConformanceContext } from './conformance-context.js';
import { delay, foreverTool, Gate, killQuietly } from './conformance-fixtures.js';

/**
 * The conformance cases for hosts and cleanup: no process, workspace or host outlives its program or session.
 * Registers them under the current `describe`; `describeEngineConformance` runs it with the others.
 */
export function describeHostCleanupCases(context: ConformanceContext): void {
  const { engine, placement, open } = context;
  describe('hosts and cleanup', () => {
    // Killing the host from outside needs a host process; the thread placement has none (its
    // workers are threads of this process), so there the case is skipped and says why.
    const hostReason =
      placement === 'thread' ? 'the thread placement has no host process to kill' : undefined;
    itWithPrograms(engine.language, hostReason)(
      'reports a host killed from outside, never runs the tool twice, and starts a fresh host next',
      { javascript: 'await tools.counted({})', python: 'await tools.counted()' },
      async (source) => {
        const started = new Gate();
        // The call stays in flight until the test has killed the host, however long finding
        // the host takes on a loaded machine.
        const release = new Gate();
        let runs = 0;
        const counted = defineTool({
          name: 'counted',
          description: 'Counts its runs.',
          input: Type.Object({}),
          execute: async () => {
            runs += 1;
            started.open();
            await release.opened;
            return runs;
          },
        });
        const test = await open({ tools: [counted], prewarm: false, observationWindowMs: 5_000 });
        const { session } = test;
        const observing = session.execute(source);
        await started.opened;
        // Other short-lived children (an engine's start-up checks) may come and go meanwhile:
        // wait for the live ones, and let any that already ended be.
        let hosts = await descendantProcesses();
        for (let attempt = 0; hosts.length === 0 && attempt < 100; attempt += 1) {
          await delay(50);
          hosts = await descendantProcesses();
        }
        expect(hosts.length).toBeGreaterThan(0);
        for (const host of hosts) killQuietly(host.pid);
        const result = await observing;
        expect(result.status).toBe('error');
        expect(result.error).toMatch(/signal=SIGKILL/);
        release.open();
        await delay(400);
        expect(runs).toBe(1);
        expect((await session.execute('"fresh"')).value).toBe('fresh');
        // The killed host's workspace, and everything of the fresh one, end with the session.
        await session.close();
        expect(await descendantProcesses()).toEqual([]);
        expect(await leftoverEntries(test.workspaceRoot)).toEqual([]);
      },
    );

    itWithPrograms(engine.language)(
      'close ends the running program, its host and the spare, and removes every workspace',
      { javascript: 'await tools.forever({})', python: 'await tools.forever()' },
      async (source) => {
        const test = await open({
          tools: [foreverTool()],
          observationWindowMs: 50,
        });
        expect((await test.session.execute(source)).status).toBe('still_working');
        if (placement === 'process') expect((await descendantProcesses()).length).toBeGreaterThan(0);
        await test.session.close();
        await test.session.close();
        expect(await descendantProcesses()).toEqual([]);
        expect(await leftoverEntries(test.workspaceRoot)).toEqual([]);
        await expect(test.session.execute('1')).rejects.toThrow(/closed/);
      },
    );
  });
}
