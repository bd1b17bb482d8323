import { execFile } from 'node:child_process';
import { chmod, copyFile, mkdtemp, readdir, readFile, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { ConfigurationError } from '@ghost/core';
import { afterEach, describe, expect, it } from 'vitest';
import type { StartProcess } from './bwrap-detect.js';
import { bwrapDetectionKey } from './bwrap-detection-key.js';
import { startBwrapProcess } from './bwrap-process.js';
import type { BwrapSandboxOptions } from './bwrap-sandbox.js';
import { createBwrapSandbox } from './bwrap-sandbox.js';
import { detectBwrapCached } from './cached-bwrap-detection.js';
import { detectionCacheFile } from './detection-cache.js';
import { findExecutable } from './find-executable.js';

const run = promisify(execFile);
const packageRoot = fileURLToPath(new URL('..', import.meta.url));
const bwrap = await findExecutable('bwrap');
const noBwrap = bwrap === undefined ? ' (skipped: bubblewrap is not installed here)' : '';

const directories: string[] = [];
afterEach(async () => {
  await Promise.all(directories.splice(0).map((path) => rm(path, { recursive: true, force: true })));
});

async function temporaryDirectory(): Promise<string> {
  const path = await mkdtemp(join(tmpdir(), 'ghost-detection-cache-'));
  directories.push(path);
  return path;
}

/** The real launcher, counting the sandboxes it starts: a detection that proves starts at least one. */
function countingStart(): { start: StartProcess; count: () => number } {
  let started = 0;
  return {
    start: (options) => {
      started += 1;
      return startBwrapProcess(options);
    },
    count: () => started,
  };
}

/** Detects with a counting launcher; resolves to the environment and how many sandboxes it started. */
async function detect(options: BwrapSandboxOptions, directory: string) {
  const { start, count } = countingStart();
  const { environment } = await detectBwrapCached(options, start, directory);
  return { environment, probes: count() };
}

async function entryFile(options: BwrapSandboxOptions, directory: string): Promise<string> {
  const key = await bwrapDetectionKey(options);
  if (key === undefined) throw new Error('no detection key on a machine with bubblewrap');
  return detectionCacheFile(directory, 'bwrap-detection', key);
}

describe('the bubblewrap detection cache', () => {
  it.skipIf(bwrap === undefined)(
    `proves the sandbox once, then a later detection with the same key starts none and finds the same${noBwrap}`,
    async () => {
      const directory = await temporaryDirectory();
      const first = await detect({}, directory);
      expect(first.environment.detection.available).toBe(true);
      expect(first.probes).toBeGreaterThan(0);
      const second = await detect({}, directory);
      expect(second.probes).toBe(0);
      expect(second.environment).toEqual(first.environment);
      // One entry, readable by its owner only, and no temporary file left behind.
      expect(await readdir(directory)).toEqual([(await entryFile({}, directory)).split('/').at(-1)]);
      expect((await stat(await entryFile({}, directory))).mode & 0o777).toBe(0o600);
    },
  );

  it.skipIf(bwrap === undefined)(
    `detects again when bubblewrap changes (a new modification time is a new key)${noBwrap}`,
    async () => {
      const directory = await temporaryDirectory();
      const binaries = await temporaryDirectory();
      const copy = join(binaries, 'bwrap');
      await copyFile(bwrap as string, copy);
      await chmod(copy, 0o755);
      const options = { bwrapPath: copy };
      expect((await detect(options, directory)).probes).toBeGreaterThan(0);
      expect((await detect(options, directory)).probes).toBe(0);
      const later = new Date(Date.now() + 60_000);
      await utimes(copy, later, later);
      const afterChange = await detect(options, directory);
      expect(afterChange.environment.detection.available).toBe(true);
      expect(afterChange.probes).toBeGreaterThan(0);
      expect((await detect(options, directory)).probes).toBe(0);
    },
  );

  it.skipIf(bwrap === undefined)(
    `ignores an entry that is corrupt, of another key, the wrong shape or writable by others, and rewrites it${noBwrap}`,
    async () => {
      const directory = await temporaryDirectory();
      const { environment } = await detect({}, directory);
      const file = await entryFile({}, directory);
      const valid = JSON.parse(await readFile(file, 'utf8')) as { key: string; value: unknown };
      const broken = [
        '{"format":1,"key":',
        JSON.stringify({ ...valid, key: `${valid.key} ` }),
        JSON.stringify({ ...valid, format: 0 }),
        JSON.stringify({
          ...valid,
          value: { ...environment, tools: { ...environment.tools, bwrap: 'bwrap' } },
        }),
        JSON.stringify({
          ...valid,
          value: { ...environment, identity: { kind: 'dropped', uid: 0, gid: 0 } },
        }),
      ];
      for (const text of broken) {
        await writeFile(file, text, { mode: 0o600 });
        const again = await detect({}, directory);
        expect(again.probes).toBeGreaterThan(0);
        expect(again.environment).toEqual(environment);
        expect(JSON.parse(await readFile(file, 'utf8'))).toEqual(valid);
      }
      await chmod(file, 0o666);
      expect((await detect({}, directory)).probes).toBeGreaterThan(0);
      expect((await detect({}, directory)).probes).toBe(0);
    },
  );

  it('caches nothing where the sandbox does not work, so fixing it takes effect at once', async () => {
    const directory = await temporaryDirectory();
    // `true` runs and exits 0 for any arguments: a key can be made, and the proof fails.
    const { environment } = await detect({ bwrapPath: (await findExecutable('true')) as string }, directory);
    expect(environment.detection.available).toBe(false);
    expect(await readdir(directory)).toEqual([]);
  });

  it.skipIf(bwrap === undefined)(
    `keeps one whole entry when two processes detect and write at once${noBwrap}`,
    async () => {
      const directory = await temporaryDirectory();
      const script = `
        import { createBwrapSandbox } from '@ghost/sandbox-bwrap';
        const detection = await createBwrapSandbox({ detectionCache: { directory: ${JSON.stringify(directory)} } }).detect();
        console.log(detection.available);
      `;
      const detectInChild = () =>
        run(process.execPath, ['--input-type=module', '-e', script], { cwd: packageRoot, timeout: 60_000 });
      const results = await Promise.all([detectInChild(), detectInChild(), detectInChild()]);
      expect(results.map(({ stdout }) => stdout.trim())).toEqual(['true', 'true', 'true']);
      expect(await readdir(directory)).toEqual([(await entryFile({}, directory)).split('/').at(-1)]);
      expect((await detect({}, directory)).probes).toBe(0);
    },
  );

  it.skipIf(bwrap === undefined)(
    `writes nothing with detectionCache 'off' or GHOST_SANDBOX_DETECTION_CACHE=off${noBwrap}`,
    async () => {
      const home = await temporaryDirectory();
      const script = `
        import { createBwrapSandbox } from '@ghost/sandbox-bwrap';
        const off = await createBwrapSandbox({ detectionCache: 'off' }).detect();
        const auto = await createBwrapSandbox().detect();
        console.log(off.available && auto.available);
      `;
      const detectWith = (env: Record<string, string>) =>
        run(process.execPath, ['--input-type=module', '-e', script], {
          cwd: packageRoot,
          env: { ...process.env, XDG_CACHE_HOME: home, ...env },
          timeout: 60_000,
        });
      expect((await detectWith({ GHOST_SANDBOX_DETECTION_CACHE: 'off' })).stdout.trim()).toBe('true');
      expect(await readdir(home)).toEqual([]);
      // The control: without the variable the default backend caches under $XDG_CACHE_HOME/ghost.
      expect((await detectWith({})).stdout.trim()).toBe('true');
      expect(await readdir(join(home, 'ghost'))).toHaveLength(1);
    },
  );

  it('rejects a detectionCache that is not auto, off or an absolute directory', () => {
    for (const detectionCache of ['on', { directory: 'relative/dir' }, { directory: 3 }, null]) {
      expect(() => createBwrapSandbox({ detectionCache } as unknown as BwrapSandboxOptions)).toThrow(
        ConfigurationError,
      );
    }
  });
});
