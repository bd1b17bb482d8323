import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, readFileSync } from 'node:fs';
import { cp, mkdir, mkdtemp, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { descendantProcesses } from '@ghost/code-mode/testing';
import { afterEach, describe, expect, it } from 'vitest';
import {
  buildCachedHostSnapshot,
  cachedHostSnapshot,
  hasHostSnapshotBuildFailed,
  hostSnapshotCacheDirectory,
  hostSnapshotKey,
} from './host-snapshot-cache.js';

const directories: string[] = [];
afterEach(async () => {
  for (const directory of directories.splice(0)) await rm(directory, { recursive: true, force: true });
});

async function cacheFolder(): Promise<string> {
  const directory = await mkdtemp(join(tmpdir(), 'ghost-snapshot-cache-'));
  directories.push(directory);
  return join(directory, 'cache');
}

const sha256 = (path: string) => createHash('sha256').update(readFileSync(path)).digest('hex');

/** The names in the cache folder, so a test sees leftovers (temporary entries, locks) too. */
const cacheNames = async (directory: string) => (await readdir(directory)).sort();

describe('where the QuickJS host snapshot cache is', () => {
  it('follows GHOST_QUICKJS_SNAPSHOT_CACHE, then XDG_CACHE_HOME, then the home directory', () => {
    expect(hostSnapshotCacheDirectory({ GHOST_QUICKJS_SNAPSHOT_CACHE: '/srv/cache', HOME: '/home/a' })).toBe(
      '/srv/cache',
    );
    expect(hostSnapshotCacheDirectory({ GHOST_QUICKJS_SNAPSHOT_CACHE: 'off' })).toBeUndefined();
    // A relative path is a mistake, never a folder relative to wherever the process runs.
    expect(hostSnapshotCacheDirectory({ GHOST_QUICKJS_SNAPSHOT_CACHE: 'cache' })).toBeUndefined();
    expect(hostSnapshotCacheDirectory({ XDG_CACHE_HOME: '/xdg' })).toBe('/xdg/ghost');
    expect(hostSnapshotCacheDirectory({ XDG_CACHE_HOME: 'relative' })).toMatch(/\/\.cache\/ghost$/);
  });
});

// Each build runs Node twice (build, then a host from it): seconds of CPU on a loaded machine.
const builds = { timeout: 400_000 };

describe('the cached QuickJS host snapshot', () => {
  it(
    'is published whole, readable by the sandbox identity, and found by the next lookup',
    builds,
    async () => {
      const directory = await cacheFolder();
      expect(cachedHostSnapshot(directory)).toBeUndefined();
      expect(await buildCachedHostSnapshot(directory)).toBe('built');
      const blob = cachedHostSnapshot(directory);
      expect(blob).toMatch(new RegExp(`^${directory}/quickjs-host-[0-9a-f]{32}/host.blob$`));
      expect((await stat(blob as string)).mode & 0o777).toBe(0o644);
      expect(await cacheNames(directory)).toEqual([expect.stringMatching(/^quickjs-host-[0-9a-f]{32}$/)]);
      expect(await buildCachedHostSnapshot(directory)).toBe('present');
    },
  );

  it(
    'is built once by two concurrent builds, and a reader never sees a partial snapshot',
    builds,
    async () => {
      const directory = await cacheFolder();
      const seen: { path: string; bytes: number; sha: string }[] = [];
      let isBuilding = true;
      const reading = (async () => {
        while (isBuilding) {
          const blob = cachedHostSnapshot(directory);
          if (blob !== undefined) {
            const bytes = readFileSync(blob);
            seen.push({
              path: blob,
              bytes: bytes.length,
              sha: createHash('sha256').update(bytes).digest('hex'),
            });
          }
          await new Promise((resolve) => setTimeout(resolve, 5));
        }
      })();
      // Without the lock, so both really build and race to publish.
      const outcomes = await Promise.all([
        buildCachedHostSnapshot(directory, { isLocked: false }),
        buildCachedHostSnapshot(directory, { isLocked: false }),
      ]);
      isBuilding = false;
      await reading;
      expect(outcomes.sort()).toEqual(['built', 'present']);
      const blob = cachedHostSnapshot(directory) as string;
      const final = { path: blob, bytes: (await stat(blob)).size, sha: sha256(blob) };
      for (const read of seen) expect(read).toEqual(final);
      expect(await cacheNames(directory)).toEqual([expect.stringMatching(/^quickjs-host-[0-9a-f]{32}$/)]);
    },
  );

  it('is built by one process while another finds the build under way', builds, async () => {
    const directory = await cacheFolder();
    const outcomes = await Promise.all([
      buildCachedHostSnapshot(directory),
      buildCachedHostSnapshot(directory),
    ]);
    expect(outcomes.sort()).toEqual(['built', 'busy']);
    expect(cachedHostSnapshot(directory)).toBeDefined();
    // The lock is gone with the build.
    expect(await cacheNames(directory)).toEqual([expect.stringMatching(/^quickjs-host-[0-9a-f]{32}$/)]);
  });

  it('ignores a broken or foreign entry and replaces it, and keys stale ones apart', builds, async () => {
    const directory = await cacheFolder();
    expect(await buildCachedHostSnapshot(directory)).toBe('built');
    const blob = cachedHostSnapshot(directory) as string;
    const entry = join(blob, '..');
    const good = `${directory}-good`;
    await cp(entry, good, { recursive: true });
    const restore = async () => {
      await rm(entry, { recursive: true, force: true });
      await cp(good, entry, { recursive: true });
      expect(cachedHostSnapshot(directory)).toBe(blob);
    };

    // Truncated.
    await writeFile(blob, 'not a snapshot');
    expect(cachedHostSnapshot(directory)).toBeUndefined();
    await restore();
    // Whole, but writable by others.
    chmodSync(blob, 0o666);
    expect(cachedHostSnapshot(directory)).toBeUndefined();
    await restore();
    // Not JSON.
    await writeFile(join(entry, 'stamp.json'), '{');
    expect(cachedHostSnapshot(directory)).toBeUndefined();
    await restore();
    // Stamped for another Node: ignored, then replaced by the next build.
    const stamp = JSON.parse(readFileSync(join(entry, 'stamp.json'), 'utf8')) as {
      key: Record<string, unknown>;
      blobBytes: number;
    };
    await writeFile(
      join(entry, 'stamp.json'),
      JSON.stringify({ ...stamp, key: { ...stamp.key, node: 'v20.0.0 linux-x64' } }),
    );
    expect(cachedHostSnapshot(directory)).toBeUndefined();
    expect(await buildCachedHostSnapshot(directory)).toBe('built');
    expect(cachedHostSnapshot(directory)).toBe(blob);

    // A file where the entry belongs: ignored, then replaced.
    await rm(entry, { recursive: true });
    await writeFile(entry, 'garbage');
    expect(cachedHostSnapshot(directory)).toBeUndefined();
    expect(await buildCachedHostSnapshot(directory)).toBe('built');
    expect(cachedHostSnapshot(directory)).toBe(blob);
    expect(await cacheNames(directory)).toEqual([expect.stringMatching(/^quickjs-host-[0-9a-f]{32}$/)]);

    // Another package version (or Node, or flags, or bundle) has an entry of its own: this one is
    // stale for it, and is not what it finds.
    expect(cachedHostSnapshot(directory, { ...hostSnapshotKey(), packageVersion: '99.0.0' })).toBeUndefined();
  });

  it(
    'leaves no process, temporary entry, lock or failure record behind when its build is stopped',
    builds,
    async () => {
      const directory = await cacheFolder();
      const controller = new AbortController();
      const building = buildCachedHostSnapshot(directory, { signal: controller.signal });
      // Stopped once Node builds the snapshot.
      for (let attempt = 0; attempt < 500; attempt += 1) {
        const commands = (await descendantProcesses()).map((found) => found.command);
        if (commands.some((command) => command.includes('--build-snapshot'))) break;
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      controller.abort(new Error('stopped by the test'));
      await expect(building).rejects.toThrow(/stopped by the test/);
      expect((await descendantProcesses()).map((found) => found.command)).not.toContainEqual(
        expect.stringContaining('--build-snapshot'),
      );
      expect(await cacheNames(directory)).toEqual([]);
      expect(hasHostSnapshotBuildFailed(directory)).toBe(false);
    },
  );
});

describe('the background build child', () => {
  const worker = fileURLToPath(new URL('../dist/snapshot-cache-worker.js', import.meta.url));

  function runWorker(args: readonly string[]): Promise<number | null> {
    return new Promise((resolve, reject) => {
      const child = spawn(process.execPath, [worker, ...args], { stdio: 'ignore', env: {} });
      child.once('error', reject);
      child.once('exit', (code) => resolve(code));
    });
  }

  it('builds and publishes the snapshot, then exits', builds, async () => {
    const directory = await cacheFolder();
    expect(await runWorker([directory])).toBe(0);
    expect(cachedHostSnapshot(directory)).toBeDefined();
  });

  it(
    'gives up at its deadline and cleans up: no temporary entry, lock, or Node left running',
    builds,
    async () => {
      const directory = await cacheFolder();
      await mkdir(directory, { recursive: true });
      expect(await runWorker([directory, '1'])).toBe(1);
      expect(await cacheNames(directory)).toEqual([]);
      expect((await descendantProcesses()).map((found) => found.command)).not.toContainEqual(
        expect.stringContaining(directory),
      );
      // A build that ran out of time says nothing about the next: the key is not marked failed.
      expect(hasHostSnapshotBuildFailed(directory)).toBe(false);
    },
  );
});
