import { spawn } from 'node:child_process';
import { readFileSync, realpathSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { FrameDecoder } from '@ghost/code-mode/host';
import { quickjsWasmPath } from './quickjs-wasm.js';

// From src/ (tests) and from dist/ alike: both sit one level below the package root.
const packageFile = (path: string) => fileURLToPath(new URL(`../${path}`, import.meta.url));

/** The host script (a plain `node` cannot run TypeScript sources, so always the build's bundle). */
export const hostScript = packageFile('dist/host.cjs');
/** The script `node --build-snapshot` runs: what a snapshot holds, with QuickJS's wasm. */
export const snapshotScript = packageFile('dist/host-snapshot.cjs');
/** Where `ghost-quickjs-snapshot` puts the startup snapshot, and what it was built with. */
export const hostSnapshotBlob = packageFile('dist/host.blob');
const hostSnapshotStamp = packageFile('dist/host.blob.json');
/** The package's manifest, whose version is part of what a cached snapshot is built from. */
export const packageManifest = packageFile('package.json');

/**
 * QuickJS's wasm runs on V8's baseline compiler (Liftoff) only. With dynamic tiering V8 recompiles
 * a hot function with its optimising compiler, and QuickJS's interpreter function is so large that
 * it counts as hot after about a hundred tool calls even at the highest budget V8 accepts: every
 * fresh host that served such a program paid that compile (several times the CPU of the calls
 * around it) and never lived long enough to profit. Tool round trips, short programs and session
 * hosts measure the same or better without it; a program computing for seconds runs slower (see
 * docs/decisions/2026-12-05-fresh-host-round-trip.md). A startup snapshot holds V8's flags, so it
 * is built with these too.
 */
export const hostV8Options = Object.freeze(['--liftoff-only']);

/** What a snapshot fits: Node refuses to start from one built by another binary or with other V8 flags. */
export interface SnapshotStamp {
  readonly node: string;
  readonly execPath: string;
  readonly execBytes: number;
  readonly execModifiedMs: number;
  readonly v8Options: readonly string[];
}

/** The stamp of a snapshot built now, by this Node. */
export function currentStamp(): SnapshotStamp {
  const execPath = realpathSync(process.execPath);
  const binary = statSync(execPath);
  return {
    node: `${process.version} ${process.platform}-${process.arch}`,
    execPath,
    execBytes: binary.size,
    execModifiedMs: binary.mtimeMs,
    v8Options: hostV8Options,
  };
}

/** Where a startup snapshot and its stamp are. */
export interface HostSnapshotFiles {
  readonly blob: string;
  readonly stamp: string;
}

const builtSnapshot: HostSnapshotFiles = { blob: hostSnapshotBlob, stamp: hostSnapshotStamp };

/** Whether the startup snapshot exists and was built by this very Node with the host's flags. */
export function isHostSnapshotUsable(files: HostSnapshotFiles = builtSnapshot): boolean {
  try {
    const built = JSON.parse(readFileSync(files.stamp, 'utf8')) as unknown;
    return JSON.stringify(built) === JSON.stringify(currentStamp()) && statSync(files.blob).isFile();
  } catch {
    return false;
  }
}

/**
 * Builds the host's startup snapshot for the Node running this, from the bundled snapshot script,
 * and checks that a host starts from it (says `hello` on fd 3) before putting it in place (by
 * default the package's `dist/host.blob`). A snapshot that does not fit is removed, so hosts start
 * from the script.
 *
 * @throws Error with Node's output when the snapshot cannot be built or a host cannot start from
 *   it, or the signal's reason once it aborts.
 */
export async function buildHostSnapshot(
  files: HostSnapshotFiles = builtSnapshot,
  signal?: AbortSignal,
): Promise<void> {
  const building = `${files.blob}.${process.pid}.tmp`;
  rmSync(files.stamp, { force: true });
  try {
    await run(
      [...hostV8Options, '--snapshot-blob', building, '--build-snapshot', snapshotScript, quickjsWasmPath()],
      signal,
    );
    await saysHello([...hostV8Options, `--snapshot-blob=${building}`, hostScript], signal);
    renameSync(building, files.blob);
    writeFileSync(files.stamp, `${JSON.stringify(currentStamp(), null, 2)}\n`);
  } catch (error) {
    rmSync(building, { force: true });
    rmSync(files.blob, { force: true });
    throw error;
  }
}

/**
 * Runs Node with `args` and a cleared environment; rejects with its stderr unless it exits 0.
 * Once `signal` aborts, Node is killed and the promise settles only after it has exited, so no
 * process is left writing into a folder the caller is about to remove.
 */
function run(args: readonly string[], signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const child = spawn(process.execPath, args, { env: {}, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr?.setEncoding('utf8').on('data', (text: string) => {
      stderr += text.slice(0, 64 * 1024 - stderr.length);
    });
    const abort = () => child.kill('SIGKILL');
    signal?.addEventListener('abort', abort, { once: true });
    child.once('error', (error) => {
      signal?.removeEventListener('abort', abort);
      reject(error);
    });
    child.once('close', (code, exitSignal) => {
      signal?.removeEventListener('abort', abort);
      if (signal?.aborted) reject(signal.reason);
      else if (code === 0) resolve();
      else reject(new Error(`node ${args.join(' ')} exited (${code ?? exitSignal}): ${stderr.trim()}`));
    });
  });
}

/** How long a host started from a new snapshot may take to say `hello`. */
const helloTimeoutMs = 60_000;

/** Starts a host with `args` and resolves once it writes its first frame (`hello`) on fd 3. */
function saysHello(args: readonly string[], signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const child = spawn(process.execPath, args, { env: {}, stdio: ['ignore', 'ignore', 'pipe', 'pipe'] });
    let stderr = '';
    let isDone = false;
    child.stderr?.setEncoding('utf8').on('data', (text: string) => {
      stderr += text;
    });
    // Generous: nothing waits for this check, and a loaded machine can take seconds to start a host.
    const timer = setTimeout(
      () => finish(new Error(`no hello within ${helloTimeoutMs / 1000} s`)),
      helloTimeoutMs,
    );
    const abort = () => finish(signal?.reason as Error);
    signal?.addEventListener('abort', abort, { once: true });
    const finish = (error?: Error) => {
      if (isDone) return;
      isDone = true;
      clearTimeout(timer);
      signal?.removeEventListener('abort', abort);
      const settle = () =>
        error
          ? reject(new Error(`A host did not start from the snapshot: ${error.message} ${stderr.trim()}`))
          : resolve();
      if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return settle();
      child.once('exit', settle);
      child.kill('SIGKILL');
    };
    const decoder = new FrameDecoder();
    child.stdio[3]?.on('data', (chunk: Buffer) => {
      let first: unknown;
      try {
        [first] = decoder.push(chunk);
      } catch (error) {
        finish(error as Error);
        return;
      }
      if (first === undefined) return; // not a whole frame yet
      const type = (first as { type?: unknown }).type;
      finish(type === 'hello' ? undefined : new Error(`its first frame was '${String(type)}', not hello`));
    });
    child.on('error', finish);
    child.on('exit', (code, signal) => finish(new Error(`it exited (${code ?? signal})`)));
  });
}
