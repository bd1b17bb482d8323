import { chmod, mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { psPath } from './process-listing.js';
import { detectSeatbelt } from './seatbelt-detect.js';
import { writeStandInSandboxExec } from './test-support/stand-in-sandbox-exec.js';

const onLinux = process.platform === 'linux';
const directory = await realpath(await mkdtemp(join(tmpdir(), 'ghost-seatbelt-detect-')));

afterAll(async () => {
  await rm(directory, { recursive: true, force: true });
});

// detect()'s macOS path, run here with the platform given as darwin: what it concludes from
// sandbox-execs that do not enforce. The real sandbox-exec's probe runs only on macOS, in
// seatbelt-conformance.test.ts.
describe.skipIf(!onLinux)(
  `detect() on macOS refuses a sandbox-exec it cannot prove${onLinux ? '' : ' (skipped: uses Linux stand-ins)'}`,
  () => {
    const macOS = { platform: 'darwin', uid: 501, ps: psPath } as const;

    it('names a sandbox-exec that is missing', async () => {
      const detection = await detectSeatbelt({ ...macOS, sandboxExec: join(directory, 'missing') });
      expect(detection.available).toBe(false);
      expect(detection.reason).toMatch(/missing\/?.* is missing or not executable\. It ships with macOS/);
      expect(Object.values(detection.capabilities).every((enforced) => !enforced)).toBe(true);
    });

    it('refuses one that runs the probe but lets it read outside its workspace', async () => {
      // The stand-in runs the command unconfined: exactly a sandbox-exec that enforces nothing.
      const standIn = await writeStandInSandboxExec(join(directory, 'unconfined'));
      const detection = await detectSeatbelt({ ...macOS, sandboxExec: standIn.path });
      expect(detection.available).toBe(false);
      expect(detection.reason).toMatch(
        /did not deny its read of a file outside the workspace, so it enforces nothing here/,
      );
    });

    it('refuses one under which the probe cannot read even its own workspace', async () => {
      const refusing = join(directory, 'refusing-sandbox-exec');
      await writeFile(refusing, '#!/bin/sh\necho "sandbox-exec: profile rejected" >&2\nexit 65\n');
      await chmod(refusing, 0o755);
      const detection = await detectSeatbelt({ ...macOS, sandboxExec: refusing });
      expect(detection.available).toBe(false);
      expect(detection.reason).toMatch(
        /could not read its own workspace \(\/bin\/cat exited 65: sandbox-exec: profile rejected\)/,
      );
    });
  },
);
