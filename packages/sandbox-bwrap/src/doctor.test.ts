import { describe, expect, it } from 'vitest';
import { createBwrapSandbox } from './bwrap-sandbox.js';
import { formatDoctorReport } from './doctor.js';
import { findExecutable } from './find-executable.js';

// The last case reads this machine's real detection, which needs bubblewrap; without it the case
// skips and says so (the unavailable report is covered by the case before it).
const hasBwrap = (await findExecutable('bwrap')) !== undefined;

describe('formatDoctorReport', () => {
  it('lists each check with its status, and the capabilities enforced', () => {
    const report = formatDoctorReport('bwrap', {
      available: true,
      capabilities: {
        processTreeOwnership: true,
        subprocessDenial: true,
        networkIsolation: true,
        filesystemIsolation: true,
        memoryLimit: true,
        cpuLimit: true,
        fileSizeLimit: true,
        openFilesLimit: true,
        processLimit: false,
        syscallFilter: true,
        environmentIsolation: true,
      },
      checks: [
        { name: 'seccomp', status: 'enforced', detail: 'x86_64 filter' },
        { name: 'memory limit', status: 'fallback', detail: 'sampled every 50 ms' },
        { name: 'process limit', status: 'missing', detail: 'no pids cgroup' },
      ],
    });
    expect(report.split('\n')).toEqual([
      'sandbox bwrap: available, code mode runs programs in it',
      '  ok   seccomp        x86_64 filter',
      '  weak memory limit   sampled every 50 ms',
      '  no   process limit  no pids cgroup',
      '  capabilities: processTreeOwnership, subprocessDenial, networkIsolation, filesystemIsolation, memoryLimit, cpuLimit, fileSizeLimit, openFilesLimit, syscallFilter, environmentIsolation',
    ]);
  });

  it('says why a sandbox is not available', async () => {
    const detection = await createBwrapSandbox({ bwrapPath: '/nonexistent/bwrap' }).detect();
    const report = formatDoctorReport('bwrap', detection);
    expect(report).toContain("sandbox bwrap: NOT available, code mode refuses sandbox: 'native' here");
    expect(report).toContain('why: the bwrap binary /nonexistent/bwrap does not exist or is not executable.');
    expect(report).toContain('capabilities: none');
  });

  it.skipIf(!hasBwrap)(
    `tells the truth about this machine${hasBwrap ? '' : ' (skipped: bubblewrap is not installed here)'}`,
    async () => {
      const report = formatDoctorReport('bwrap', await createBwrapSandbox().detect());
      expect(report).toMatch(/^sandbox bwrap: available/);
      expect(report).toMatch(/ok {3}seccomp +x86_64|ok {3}seccomp +aarch64/);
      // Which identity programs run as, for a root parent and any other.
      expect(report).toMatch(
        process.getuid?.() === 0
          ? /\n {2}ok {3}identity +the parent is root, so each program runs as an identity no other sandbox has, uid and gid \d+ \+ the pid of its launcher/
          : new RegExp(
              `\\n {2}ok {3}identity +programs run as uid ${process.getuid?.()}, gid ${process.getgid?.()}, the parent's own`,
            ),
      );
    },
  );
});
