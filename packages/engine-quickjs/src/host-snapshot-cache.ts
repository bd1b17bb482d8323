// The QuickJS host's startup snapshot, cached per user. A snapshot fits only the Node binary and
// V8 flags that built it, so a package installed from the registry ships none (`files` leaves
// `dist/host.blob` out); the first process that uses the engine builds one in the background into
// this cache, and later hosts start from it. See docs/decisions/2026-12-05-fresh-host-cost.md.
import { spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import {
  chmodSync,
  closeSync,
  constants,
  lstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  type Stats,
  statSync,
  writeFileSync,
} from 'node:fs';
import { homedir, setPriority } from 'node:os';
import { isAbsolute, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  buildHostSnapshot,
  currentStamp,
  packageManifest,
  type SnapshotStamp,
  snapshotScript,
} from './host-start.js';
import { quickjsWasmPath } from './quickjs-wasm.js';

/**
 * The environment variable that moves the cache (an absolute directory) or turns it off (`off`):
 * hosts then start from the package's own snapshot when it has one, else from the bundled script.
 */
const hostSnapshotCacheVariable = 'GHOST_QUICKJS_SNAPSHOT_CACHE';

/** Bumped whenever what an entry holds changes: entries of another format are other entries. */
const cacheFormat = 1;

/** A build that has not finished by then is abandoned (a build takes a few seconds of CPU). */
export const backgroundBuildDeadlineMs = 120_000;

/**
 * After a failed build, processes start no new one for this long (the failure is recorded): long
 * enough that a Node which cannot build snapshots does not pay for a build in every process, short
 * enough that a build that failed on an overloaded machine is soon tried again.
 */
const failureRetryMs = 60 * 60 * 1000;

/** A lock older than a build's deadline was left by a builder that died; it no longer counts. */
const staleLockMs = backgroundBuildDeadlineMs + 60_000;

/** Leftovers of a builder that was killed (its temporary entry) are removed after this long. */
const leftoverMs = 10 * 60 * 1000;

/**
 * Where cached snapshots live: `$GHOST_QUICKJS_SNAPSHOT_CACHE` when it is an absolute path (any
 * other value but `off` turns the cache off, so a typo never writes somewhere unexpected), else
 * `$XDG_CACHE_HOME/ghost` when that is absolute, else `~/.cache/ghost` (the folder the bwrap
 * sandbox's detection cache uses); undefined when the cache is off or there is no home directory.
 */
export function hostSnapshotCacheDirectory(environment: NodeJS.ProcessEnv = process.env): string | undefined {
  const choice = environment[hostSnapshotCacheVariable];
  if (choice !== undefined && choice !== '') return isAbsolute(choice) ? choice : undefined;
  const xdg = environment.XDG_CACHE_HOME;
  if (xdg !== undefined && isAbsolute(xdg)) return join(xdg, 'ghost');
  try {
    const home = homedir();
    return isAbsolute(home) ? join(home, '.cache', 'ghost') : undefined;
  } catch {
    return undefined;
  }
}

/** What a cached snapshot is built from: when any of it changes the snapshot is stale, a new entry. */
export interface HostSnapshotKey extends SnapshotStamp {
  readonly format: number;
  /** The engine package's version. */
  readonly packageVersion: string;
  /** SHA-256 of what the snapshot holds: the bundled snapshot script and QuickJS's wasm. */
  readonly contentSha256: string;
}

let memorizedKey: HostSnapshotKey | undefined;

/**
 * The key of the snapshot this process's hosts would start from: the Node binary (path, size,
 * modification time), its version, platform and architecture, the host's V8 flags, the package's
 * version and the content of what the snapshot holds. Computed once per process.
 *
 * @throws Error when the package's files cannot be read.
 */
export function hostSnapshotKey(): HostSnapshotKey {
  if (memorizedKey !== undefined) return memorizedKey;
  const manifest = JSON.parse(readFileSync(packageManifest, 'utf8')) as { version?: unknown };
  const content = createHash('sha256')
    .update(readFileSync(snapshotScript))
    .update(readFileSync(quickjsWasmPath()));
  memorizedKey = {
    format: cacheFormat,
    ...currentStamp(),
    packageVersion: String(manifest.version),
    contentSha256: content.digest('hex'),
  };
  return memorizedKey;
}

/** The entry's folder: one per key, so Nodes and package versions used side by side never evict each other. */
function entryPath(directory: string, key: HostSnapshotKey): string {
  const digest = createHash('sha256').update(JSON.stringify(key)).digest('hex').slice(0, 32);
  return join(directory, `quickjs-host-${digest}`);
}

/** What an entry's `stamp.json` says. */
interface EntryStamp {
  readonly key: HostSnapshotKey;
  readonly blobBytes: number;
}

/** Whether a cache file was written by this user and can be changed by no one else. */
function isOwnProtected(stats: Stats): boolean {
  const uid = process.getuid?.();
  return (uid === undefined || stats.uid === uid) && (stats.mode & 0o022) === 0;
}

/**
 * The path of the cached snapshot for `key` when there is one to trust, else undefined: the
 * entry is a folder and its files are regular files, all owned by this user and writable by no one
 * else, its stamp names this very key, and the snapshot has the size it was published with. An
 * entry is published whole (renamed into place after a host started from it), so a half-written
 * one is never seen. Never throws.
 */
export function cachedHostSnapshot(
  directory: string,
  key: HostSnapshotKey = hostSnapshotKey(),
): string | undefined {
  const entry = entryPath(directory, key);
  try {
    const folder = lstatSync(entry);
    if (!folder.isDirectory() || !isOwnProtected(folder)) return undefined;
    const stampFile = join(entry, 'stamp.json');
    const stampStats = lstatSync(stampFile);
    if (!stampStats.isFile() || !isOwnProtected(stampStats) || stampStats.size > 64 * 1024) return undefined;
    const stamp = JSON.parse(readFileSync(stampFile, 'utf8')) as Partial<EntryStamp> | null;
    if (JSON.stringify(stamp?.key) !== JSON.stringify(key)) return undefined;
    const blob = join(entry, 'host.blob');
    const blobStats = lstatSync(blob);
    if (!blobStats.isFile() || !isOwnProtected(blobStats) || blobStats.size !== stamp?.blobBytes)
      return undefined;
    return blob;
  } catch {
    return undefined;
  }
}

/** How a build of the cached snapshot went. */
export type HostSnapshotBuildOutcome =
  /** This call built and published it. */
  | 'built'
  /** A valid entry was there already, or another process published one first. */
  | 'present'
  /** Another process is building it (its lock is fresh), so this call did nothing. */
  | 'busy';

/** Options of {@link buildCachedHostSnapshot}. */
export interface HostSnapshotBuildOptions {
  /** The key to build for (default: this process's). */
  readonly key?: HostSnapshotKey;
  /** Aborts the build: its Node processes are killed and its temporary entry removed. */
  readonly signal?: AbortSignal;
  /** Whether to take the entry's lock, so concurrent processes build once (default true). */
  readonly isLocked?: boolean;
}

/**
 * Builds the startup snapshot for `key` into the cache folder and publishes it: built into a
 * temporary folder of its own, checked by starting a host from it (it must say `hello`), then
 * renamed into place as a whole. Two processes building at once each publish a whole entry or
 * find the other's; a broken or foreign entry under the key's name is moved aside and replaced.
 * A failed build is recorded beside the entry, and background builds skip the key for an hour.
 *
 * @throws Error when the snapshot cannot be built, a host cannot start from it or the folder
 *   cannot be written; the signal's reason once it aborts.
 */
export async function buildCachedHostSnapshot(
  directory: string,
  options: HostSnapshotBuildOptions = {},
): Promise<HostSnapshotBuildOutcome> {
  const key = options.key ?? hostSnapshotKey();
  const entry = entryPath(directory, key);
  mkdirSync(directory, { recursive: true, mode: 0o700 });
  removeLeftovers(directory);
  if (cachedHostSnapshot(directory, key) !== undefined) return 'present';
  const lock = options.isLocked === false ? undefined : takeLock(`${entry}.lock`);
  if (lock === null) return 'busy';
  const building = `${entry}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
  try {
    mkdirSync(building, { mode: 0o755 });
    // The sandbox may run the host as another user (bwrap's dropped identity), who must read the blob.
    chmodSync(building, 0o755);
    const blob = join(building, 'host.blob');
    const stampFile = join(building, 'stamp.json');
    await buildHostSnapshot({ blob, stamp: stampFile }, options.signal);
    chmodSync(blob, 0o644);
    const stamp: EntryStamp = { key, blobBytes: statSync(blob).size };
    writeFileSync(stampFile, `${JSON.stringify(stamp, null, 2)}\n`, { mode: 0o644 });
    chmodSync(stampFile, 0o644);
    const outcome = publish(building, entry, directory, key);
    rmSync(`${entry}.failed`, { force: true });
    return outcome;
  } catch (error) {
    if (options.signal?.aborted !== true) writeFailure(`${entry}.failed`, error);
    throw error;
  } finally {
    rmSync(building, { recursive: true, force: true });
    if (lock !== undefined) releaseLock(`${entry}.lock`, lock);
  }
}

/** Renames the built folder into place; a valid entry already there wins, an invalid one is replaced. */
function publish(
  building: string,
  entry: string,
  directory: string,
  key: HostSnapshotKey,
): HostSnapshotBuildOutcome {
  for (let attempt = 0; ; attempt += 1) {
    try {
      renameSync(building, entry);
      return 'built';
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code !== 'ENOTEMPTY' && code !== 'EEXIST' && code !== 'ENOTDIR' && code !== 'EISDIR') throw error;
      if (cachedHostSnapshot(directory, key) !== undefined) return 'present';
      if (attempt === 3) throw error;
      // Broken or foreign: moved aside first, so a reader sees it, nothing, or the new entry.
      const aside = `${entry}.${process.pid}.${randomBytes(6).toString('hex')}.stale`;
      try {
        renameSync(entry, aside);
      } catch (moveError) {
        if ((moveError as NodeJS.ErrnoException).code !== 'ENOENT') throw moveError;
      }
      rmSync(aside, { recursive: true, force: true });
    }
  }
}

/** Creates the lock file; null when another builder holds a fresh one. */
function takeLock(path: string): string | null {
  const token = `${process.pid} ${randomBytes(6).toString('hex')}`;
  for (let attempt = 0; attempt < 2; attempt += 1) {
    try {
      const descriptor = openSync(path, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, 0o600);
      try {
        writeFileSync(descriptor, token);
      } finally {
        closeSync(descriptor);
      }
      return token;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const held = lstatSync(path, { throwIfNoEntry: false });
      if (held !== undefined && Date.now() - held.mtimeMs < staleLockMs) return null;
      rmSync(path, { force: true });
    }
  }
  return null;
}

/** Removes the lock if it is still this builder's (a stale one may have been taken over). */
function releaseLock(path: string, token: string): void {
  try {
    if (readFileSync(path, 'utf8') === token) rmSync(path, { force: true });
  } catch {
    // Already gone.
  }
}

/** Removes what killed builders left (temporary and moved-aside entries) once they are old. */
function removeLeftovers(directory: string): void {
  let names: string[];
  try {
    names = readdirSync(directory);
  } catch {
    return;
  }
  for (const name of names) {
    if (!name.startsWith('quickjs-host-') || !(name.endsWith('.tmp') || name.endsWith('.stale'))) continue;
    const path = join(directory, name);
    try {
      if (Date.now() - lstatSync(path).mtimeMs > leftoverMs) rmSync(path, { recursive: true, force: true });
    } catch {
      // Removed by another builder meanwhile.
    }
  }
}

function writeFailure(path: string, error: unknown): void {
  try {
    writeFileSync(
      path,
      `${JSON.stringify({ failedAt: new Date().toISOString(), message: String(error) }, null, 2)}\n`,
    );
  } catch {
    // The folder is not writable: the next process tries again.
  }
}

/** Whether a build for `key` failed within the last hour (see the entry's `.failed` file for why). */
export function hasHostSnapshotBuildFailed(
  directory: string,
  key: HostSnapshotKey = hostSnapshotKey(),
): boolean {
  const stats = lstatSync(`${entryPath(directory, key)}.failed`, { throwIfNoEntry: false });
  return stats !== undefined && Date.now() - stats.mtimeMs < failureRetryMs;
}

const workerScript = fileURLToPath(new URL('../dist/snapshot-cache-worker.js', import.meta.url));

let isBackgroundBuildStarted = false;

/**
 * Starts, at most once per process, a child that builds the cached snapshot (see
 * `snapshot-cache-worker.ts`). The child runs detached at the lowest CPU priority with no
 * connection to this process: it never keeps this process alive, never delays a program (hosts
 * start from the bundled script meanwhile), and ends on its own within
 * {@link backgroundBuildDeadlineMs}, even when this process has exited. Never throws.
 */
export function buildCachedHostSnapshotInBackground(directory: string): void {
  if (isBackgroundBuildStarted) return;
  isBackgroundBuildStarted = true;
  try {
    if (hasHostSnapshotBuildFailed(directory)) return;
    const child = spawn(process.execPath, [workerScript, directory], {
      detached: true,
      stdio: 'ignore',
      env: {},
    });
    child.once('error', () => undefined);
    child.unref();
    if (child.pid !== undefined) setPriority(child.pid, 19);
  } catch {
    // No snapshot this time: hosts keep starting from the script.
  }
}
