import { createHash, randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { lstat, mkdir, open, readFile, rename, rm } from 'node:fs/promises';
import { homedir } from 'node:os';
import { isAbsolute, join } from 'node:path';

/** Bumped whenever what is cached, or how it is detected, changes: older entries are then ignored. */
const cacheFormat = 1;

/** A cached detection is a few kilobytes; anything much larger is not ours. */
const largestEntryBytes = 256 * 1024;

/**
 * Where detections are cached: `$XDG_CACHE_HOME/ghost` when that is an absolute path, else
 * `~/.cache/ghost`; undefined for a user with no home directory (a service account with neither
 * `HOME` nor a passwd entry), who then detects in every process.
 */
export function defaultDetectionCacheDirectory(
  environment: NodeJS.ProcessEnv = process.env,
): string | undefined {
  const xdg = environment.XDG_CACHE_HOME;
  if (xdg !== undefined && isAbsolute(xdg)) return join(xdg, 'ghost');
  let home: string;
  try {
    home = homedir();
  } catch {
    return undefined;
  }
  return isAbsolute(home) ? join(home, '.cache', 'ghost') : undefined;
}

/** The file one key's entry lives in: one file per key, so differently configured backends never evict each other. */
export function detectionCacheFile(directory: string, name: string, key: string): string {
  const digest = createHash('sha256').update(key).digest('hex').slice(0, 32);
  return join(directory, `${name}-${digest}.json`);
}

/**
 * The value cached under `key`, or undefined when there is none or it cannot be trusted: a file
 * that is not a regular file owned by this user and writable by no one else, over the size
 * bound, not JSON, of another format, or written for another key. Never throws; what it
 * ignores is rewritten by the next detection.
 */
export async function readDetectionCache(directory: string, name: string, key: string): Promise<unknown> {
  const file = detectionCacheFile(directory, name, key);
  try {
    const stats = await lstat(file);
    const uid = process.getuid?.();
    if (!stats.isFile() || stats.size > largestEntryBytes) return undefined;
    if ((uid !== undefined && stats.uid !== uid) || (stats.mode & 0o022) !== 0) return undefined;
    const entry: unknown = JSON.parse(await readFile(file, 'utf8'));
    if (typeof entry !== 'object' || entry === null) return undefined;
    const { format, key: storedKey, value } = entry as Record<string, unknown>;
    if (format !== cacheFormat || storedKey !== key) return undefined;
    return value;
  } catch {
    return undefined;
  }
}

/**
 * Caches `value` under `key`, atomically: the entry is written to a file of its own and renamed
 * over the old one, so a reader (or a second writer at the same time) sees either entry whole,
 * never a mix. Best effort: a cache that cannot be written (read-only home, full disk) only
 * means the next process detects again, so failures are swallowed.
 */
export async function writeDetectionCache(
  directory: string,
  name: string,
  key: string,
  value: unknown,
): Promise<void> {
  const file = detectionCacheFile(directory, name, key);
  const temporary = `${file}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
  try {
    await mkdir(directory, { recursive: true, mode: 0o700 });
    const handle = await open(temporary, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, 0o600);
    try {
      await handle.writeFile(JSON.stringify({ format: cacheFormat, key, value }));
    } finally {
      await handle.close();
    }
    await rename(temporary, file);
  } catch {
    await rm(temporary, { force: true }).catch(() => undefined);
  }
}

/** Removes the entry cached under `key`, so the next process detects again. Never throws. */
export async function forgetDetectionCache(directory: string, name: string, key: string): Promise<void> {
  await rm(detectionCacheFile(directory, name, key), { force: true }).catch(() => undefined);
}
