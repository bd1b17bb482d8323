import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { expect } from 'vitest';
import { type ConformanceCase, escapeCase } from './conformance-case.js';
import { diskFillProbe, memoryBombProbe, openFilesProbe, spinCpuProbe } from './probes/resource-probes.js';

const mebibyte = 1024 * 1024;

/**
 * The memory limit of the bomb. Node needs about 40 MiB to start, so a smaller limit would only
 * test that Node cannot start; the bomb asks for four times this.
 */
const memoryLimitBytes = 128 * mebibyte;
const memoryBombMebibytes = 512;
const fileLimitBytes = 1 * mebibyte;
const openFilesLimit = 64;

/** Each resource limit hit on purpose; the process is stopped or refused, the parent carries on. */
export function resourceEscapeCases(): ConformanceCase[] {
  return [
    escapeCase({
      title: 'a CPU spin is ended by limits.cpuSeconds (1 s)',
      needs: ['cpuLimit'],
      run: async (harness) => {
        const run = await harness.runNode(spinCpuProbe, { limits: { cpuSeconds: 1 } });
        expect(run.stdout, 'the probe started').toContain('started');
        expect(run.exit.signal, `the spin was not stopped: ${JSON.stringify(run.exit)}`).not.toBeNull();
        expect(run.exit.limitExceeded, 'the wall clock, not the CPU limit, stopped it').not.toBe(
          'wallSeconds',
        );
        expect(run.elapsedMilliseconds).toBeLessThan(10_000);
      },
    }),
    escapeCase({
      title: `a memory bomb (${memoryBombMebibytes} MiB touched) is stopped by limits.memoryBytes (${memoryLimitBytes / mebibyte} MiB)`,
      needs: ['memoryLimit'],
      run: async (harness) => {
        const run = await harness.runNode(memoryBombProbe(memoryBombMebibytes), {
          limits: { memoryBytes: memoryLimitBytes },
        });
        expect(run.stdout, `the probe started; stderr: ${run.stderr.slice(0, 500)}`).toContain('started');
        expect(run.stdout, 'the bomb allocated everything').not.toContain('allocatedMebibytes');
        expect(run.exit.code === 0 && run.exit.signal === null, 'the bomb exited normally').toBe(false);
      },
    }),
    escapeCase({
      title: `a disk fill is stopped at limits.fileBytes (${fileLimitBytes / mebibyte} MiB) with EFBIG`,
      needs: ['fileSizeLimit'],
      run: async (harness) => {
        const workspace = await harness.workspace();
        const run = await harness.runNode(diskFillProbe(64 * mebibyte), {
          workspace,
          limits: { fileBytes: fileLimitBytes },
        });
        const written = await stat(join(workspace, 'fill.bin'));
        expect(written.size, 'bytes in the file, seen from outside').toBeLessThanOrEqual(fileLimitBytes);
        if (run.exit.signal === 'SIGXFSZ') return;
        expect(harness.report<{ code?: string }>(run).code).toBe('EFBIG');
      },
    }),
    escapeCase({
      title: `opening files past limits.openFiles (${openFilesLimit}) fails with EMFILE`,
      needs: ['openFilesLimit'],
      run: async (harness) => {
        const run = await harness.runNode(openFilesProbe(10_000), { limits: { openFiles: openFilesLimit } });
        const report = harness.report<{ opened: number; code?: string }>(run);
        expect(report.code).toBe('EMFILE');
        expect(report.opened).toBeLessThan(openFilesLimit);
      },
    }),
  ];
}
