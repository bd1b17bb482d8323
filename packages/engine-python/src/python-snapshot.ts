import { execFile } from 'node:child_process';
import { createHash, randomUUID } from 'node:crypto';
import { mkdir, readFile, rename, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const makerScript = fileURLToPath(new URL('../host/make-snapshot.mjs', import.meta.url));
const preludeFile = fileURLToPath(new URL('../host/guest_prelude.py', import.meta.url));
const magic = Buffer.from('GHOSTPY1');
const headerBytes = magic.length + 32;
/** Making a snapshot loads Pyodide once: seconds, more on a busy machine. */
const makeTimeoutMs = 180_000;

/** The directory snapshots are kept in: the user's cache, else the temporary directory. */
export function snapshotDirectory(env: NodeJS.ProcessEnv = process.env): string {
  if (env.XDG_CACHE_HOME) return join(env.XDG_CACHE_HOME, 'ghost');
  try {
    const home = homedir();
    if (home) return join(home, '.cache', 'ghost');
  } catch {
    // No home directory: the temporary directory below.
  }
  return join(tmpdir(), 'ghost-cache');
}

/** The snapshot's file name: one per Pyodide version and prelude, so a change makes a new one. */
async function snapshotName(): Promise<string> {
  const pyodideVersion = (createRequire(import.meta.url)('pyodide/package.json') as { version: string })
    .version;
  const prelude = await readFile(preludeFile);
  const key = createHash('sha256')
    .update(pyodideVersion)
    .update('\0')
    .update(prelude)
    .digest('hex')
    .slice(0, 16);
  return `python-engine-pyodide-${pyodideVersion}-${key}.snapshot`;
}

/** Whether the file is a whole snapshot: its tag, and the SHA-256 of what follows it. */
async function isIntact(path: string): Promise<boolean> {
  let file: Buffer;
  try {
    file = await readFile(path);
  } catch {
    return false;
  }
  if (file.length <= headerBytes || !file.subarray(0, magic.length).equals(magic)) return false;
  const digest = createHash('sha256').update(file.subarray(headerBytes)).digest();
  return digest.equals(file.subarray(magic.length, headerBytes));
}

/** Makes the snapshot in a child process, into a temporary file renamed into place when whole. */
async function makeSnapshot(path: string): Promise<void> {
  const temporary = `${path}.${process.pid}.${randomUUID()}.tmp`;
  try {
    await new Promise<void>((resolve, reject) => {
      execFile(
        process.execPath,
        [makerScript, temporary],
        { timeout: makeTimeoutMs, killSignal: 'SIGKILL', maxBuffer: 1024 * 1024 },
        (error, _stdout, stderr) => {
          if (error) reject(new Error(`${error.message}${stderr ? `: ${stderr.trim()}` : ''}`));
          else resolve();
        },
      );
    });
    if (!(await isIntact(temporary))) throw new Error('the snapshot it wrote is not whole');
    await rename(temporary, path);
  } finally {
    await rm(temporary, { force: true });
  }
}

/**
 * The path of Pyodide's memory snapshot for this machine, made once (per Pyodide version and
 * prelude) in a short-lived child process and checked once per process: hosts load it instead of
 * starting Pyodide from scratch (docs/decisions/2026-12-07-python-engine.md). A damaged snapshot
 * is made again. Undefined when none can be made (a read-only cache, say): hosts then load
 * Pyodide without it, slower but the same.
 */
export async function pythonSnapshot(directory = snapshotDirectory()): Promise<string | undefined> {
  try {
    const path = join(directory, await snapshotName());
    if (await isIntact(path)) return path;
    await mkdir(directory, { recursive: true, mode: 0o700 });
    await makeSnapshot(path);
    return path;
  } catch (error) {
    process.emitWarning(
      `The Python engine could not make its Pyodide snapshot in ${directory} (${(error as Error).message}); its hosts load Pyodide without it, which takes longer.`,
      { type: 'GhostWarning', code: 'PYTHON_SNAPSHOT_UNAVAILABLE' },
    );
    return undefined;
  }
}

const checked = new Map<string, Promise<string | undefined>>();

/** {@link pythonSnapshot}, once per process and directory: sessions opening together share it. */
export function sharedPythonSnapshot(directory = snapshotDirectory()): Promise<string | undefined> {
  let found = checked.get(directory);
  if (found === undefined) {
    found = pythonSnapshot(directory);
    checked.set(directory, found);
  }
  return found;
}
