import { expect } from 'vitest';
import { type ConformanceCase, escapeCase, type SuiteContext } from './conformance-case.js';
import { inheritableDescriptors } from './outside-descriptors.js';
import { peakProcessCount, processesWithMarker } from './outside-processes.js';
import type { Attempt } from './probes/node-probe.js';
import { orphansProbe, spawnManyProbe, startProgramProbe } from './probes/process-probes.js';

/** `limits.processes` for the flood cases: room for Node's own threads, which a pids limit counts too. */
const processLimit = 32;

/** Descendants, floods and descriptors: what a process tree may start and leave behind. */
export function processEscapeCases(context: SuiteContext): ConformanceCase[] {
  return [
    escapeCase({
      title: 'no descendant survives close(): background, setsid and double-forked children',
      needs: ['processTreeOwnership'],
      run: async (harness) => {
        const marker = harness.marker();
        const child = await harness.spawnNode(orphansProbe(marker), {}, [marker]);
        await harness.waitForReady(child);
        // The probe, its background and detached children and the grandchild; seeing them proves the search from outside works.
        expect(
          (await processesWithMarker(marker)).length,
          'marked processes before close()',
        ).toBeGreaterThanOrEqual(4);
        await child.close();
        expect(await processesWithMarker(marker), 'marked processes left after close()').toEqual([]);
      },
    }),
    ...floodCases(context),
    escapeCase({
      title: "subprocesses: 'deny' stops child_process.spawn, yet Node itself runs",
      needs: ['subprocessDenial'],
      run: async (harness) => {
        const run = await harness.runNode(startProgramProbe, { subprocesses: 'deny' });
        const report = harness.report<{ synchronous: Attempt; asynchronous: Attempt }>(run);
        expect(report.synchronous).toMatchObject({ isAllowed: false });
        expect(report.asynchronous).toMatchObject({ isAllowed: false });
      },
    }),
    escapeCase({
      title:
        'pid 1 of the sandbox is out of reach: its /proc/1/mem and /proc/1/environ and pidfd_getfd of its descriptors fail',
      needs: ['processTreeOwnership', 'syscallFilter', 'native probe'],
      linuxOnly: "its subject is a pid namespace's init, /proc/1 and pidfd_getfd",
      run: async (harness) => {
        const report = harness.report<{
          pid: number;
          mem: number;
          environ: number;
          pidfdOpen: number;
          getfd: number[];
        }>(await harness.runNative('pid1'));
        // A backend may run the program as its namespace's init; then there is no other pid 1.
        if (report.pid === 1) return;
        expect(report.mem, 'errno of opening /proc/1/mem (0: it opened)').not.toBe(0);
        expect(report.environ, 'errno of opening /proc/1/environ (0: it opened)').not.toBe(0);
        // -1: no pidfd to try with, which is a denial too.
        for (const [fd, errno] of report.getfd.entries()) {
          expect(errno, `errno of pidfd_getfd of pid 1's fd ${fd} (0: it was taken)`).not.toBe(0);
        }
      },
    }),
    escapeCase({
      title: 'the process holds no descriptors but stdio and its channels',
      needs: ['native probe'],
      run: async (harness) => {
        const report = harness.report<{ fds: number[] }>(await harness.runNative('fds', [], { extraFds: 2 }));
        // stdin may be closed or /dev/null; stdout, stderr and both channels must be there.
        expect(report.fds.filter((fd) => fd >= 1 && fd <= 4)).toEqual([1, 2, 3, 4]);
        // A descriptor this process inherited without close-on-exec reaches any plainly spawned
        // child; only a backend that claims filesystemIsolation must close it (it could be a
        // directory outside), the others must add none of their own.
        const tolerated = context.capabilities.filesystemIsolation
          ? []
          : await inheritableDescriptors(harness.nativeProbePath);
        const extra = report.fds.filter((fd) => fd > 4 && !tolerated.includes(fd));
        expect(extra, 'descriptors the process should not hold').toEqual([]);
      },
    }),
  ];
}

/** Fork bombs and spawn floods: held to `limits.processes`, and nothing of them left after close(). */
function floodCases(context: SuiteContext): ConformanceCase[] {
  return [
    escapeCase({
      title: `a fork bomb is held to limits.processes (${processLimit})`,
      needs: ['processLimit', 'native probe'],
      run: async (harness) => {
        const marker = harness.marker();
        const { result: run, peak } = await peakProcessCount(
          marker,
          harness.runNative('fork-bomb', ['2', marker], { limits: { processes: processLimit } }),
        );
        const report = harness.report<{ forks: number; failures: number }>(run);
        expect(report.failures, 'forks refused once the limit was reached').toBeGreaterThan(0);
        expect(peak, 'the most marked processes at once').toBeLessThanOrEqual(processLimit);
        await run.process.close();
        if (context.capabilities.processTreeOwnership) expect(await processesWithMarker(marker)).toEqual([]);
      },
    }),
    escapeCase({
      title: `1,000 spawns are held to limits.processes (${processLimit})`,
      needs: ['processLimit', 'native probe'],
      run: async (harness) => {
        const marker = harness.marker();
        const { result: run, peak } = await peakProcessCount(
          marker,
          harness.runNode(spawnManyProbe(harness.nativeProbePath, ['sleep', marker], 1_000), {
            limits: { processes: processLimit },
          }),
        );
        const report = harness.report<{ started: number; failures: Record<string, number> }>(run);
        expect(report.started).toBeLessThan(processLimit);
        expect(Object.values(report.failures).reduce((sum, count) => sum + count, 0)).toBe(
          1_000 - report.started,
        );
        expect(peak, 'the most marked processes at once').toBeLessThanOrEqual(processLimit);
        await run.process.close();
        if (context.capabilities.processTreeOwnership) expect(await processesWithMarker(marker)).toEqual([]);
      },
    }),
  ];
}
