import type { Duplex } from 'node:stream';
import { completePlugin, type PluginDeclaration } from './plugin-declaration.js';

/**
 * What a sandbox backend can enforce on this machine. Each flag is true only when the backend
 * really enforces it here, not when it would on a better-equipped host: code mode refuses a
 * policy the backend cannot enforce, so an optimistic flag would turn into an unconfined program.
 */
export interface SandboxCapabilities {
  /**
   * The backend owns the whole process tree (a PID namespace, a cgroup), so `close()` and
   * `kill()` reach every descendant, even one that left the process group. The backend's own
   * processes in it (a PID namespace's init) are out of the program's reach.
   */
  readonly processTreeOwnership: boolean;
  /** The sandboxed process cannot start other programs (seccomp, a deny-exec profile). */
  readonly subprocessDenial: boolean;
  /** `network: 'none'` is enforced: no route to the machine's network, not even loopback services. */
  readonly networkIsolation: boolean;
  /**
   * Only `runtimePaths` (read-only) and the workspace (writable) are visible; the rest of the
   * filesystem is not. Nothing the process does changes the machine beyond the workspace: it never
   * runs as real root (when the parent is root, it runs as an unprivileged user), `/proc/sys` is
   * read-only, the workspace is mounted `nosuid,nodev`, and the machine's name and kernel command
   * line are hidden.
   */
  readonly filesystemIsolation: boolean;
  /**
   * `limits.memoryBytes` is enforced: by the kernel (a cgroup memory limit) or, where no cgroup is
   * available, by the backend sampling the process tree's resident memory and killing it over the
   * limit. {@link SandboxDetection.checks} says which.
   */
  readonly memoryLimit: boolean;
  /** `limits.cpuSeconds` is enforced by the operating system (`RLIMIT_CPU`). */
  readonly cpuLimit: boolean;
  /** `limits.fileBytes` is enforced by the operating system (`RLIMIT_FSIZE`). */
  readonly fileSizeLimit: boolean;
  /** `limits.openFiles` is enforced by the operating system (`RLIMIT_NOFILE`). */
  readonly openFilesLimit: boolean;
  /** `limits.processes` is enforced for the whole sandbox (a cgroup `pids` limit). */
  readonly processLimit: boolean;
  /**
   * Dangerous system calls are denied (a seccomp filter): `ptrace` and `process_vm_*`, `mount`,
   * `unshare`/`setns`, `bpf`, `io_uring_*`, keyrings, `perf_event_open`, `kexec*`, `TIOCSTI`, and
   * with `network: 'none'` sockets other than `AF_UNIX`; the process runs with no new privileges.
   */
  readonly syscallFilter: boolean;
  /**
   * The process sees exactly `env` and nothing inherited from the parent. A backend may add `PWD`,
   * the working directory (bubblewrap always sets it).
   */
  readonly environmentIsolation: boolean;
}

/**
 * Every capability false: what a backend reports where it does not work at all.
 *
 * @example
 * ```ts
 * return { available: false, reason: 'jail(8) is not installed.', capabilities: noSandboxCapabilities };
 * ```
 */
export const noSandboxCapabilities: SandboxCapabilities = Object.freeze({
  processTreeOwnership: false,
  subprocessDenial: false,
  networkIsolation: false,
  filesystemIsolation: false,
  memoryLimit: false,
  cpuLimit: false,
  fileSizeLimit: false,
  openFilesLimit: false,
  processLimit: false,
  syscallFilter: false,
  environmentIsolation: false,
});

/**
 * One thing a backend checked on this machine, such as `seccomp` or `memory limit`, for people
 * reading a diagnosis (`ghost doctor`): whether it is enforced, and how or why not.
 */
export interface SandboxCheck {
  /** A short name, such as `user namespaces`, `seccomp` or `memory limit`. */
  readonly name: string;
  /**
   * `enforced`: it works as intended. `fallback`: enforced by a weaker means, said in `detail`.
   * `missing`: not enforced here; `detail` says why and how to fix it.
   */
  readonly status: 'enforced' | 'fallback' | 'missing';
  /** How it is enforced, or what is missing and how to fix it. */
  readonly detail: string;
}

/** The answer of {@link SandboxBackendV1.detect}: whether the backend works here, and what it enforces. */
export interface SandboxDetection {
  /** True when `spawn` can contain a process on this machine right now. */
  readonly available: boolean;
  /**
   * When not available: what is missing and how to fix it, written for the user, such as
   * `bwrap is not installed: apt-get install bubblewrap`. Ghost puts it in `SandboxUnavailableError`.
   */
  readonly reason?: string;
  /** What the backend enforces here; every flag is false when it is not available. */
  readonly capabilities: SandboxCapabilities;
  /** What the backend checked, one entry per mechanism, for diagnostics; optional. */
  readonly checks?: readonly SandboxCheck[];
}

/**
 * Network access for a sandboxed process: `'none'` (no network) or `'shared'` (the machine's
 * network, shared with the parent).
 */
export type SandboxNetwork = 'none' | 'shared';

/**
 * Resource limits for one sandboxed process. A limit left out is not applied by the backend;
 * code mode always sets the ones its policy needs.
 */
export interface SandboxLimits {
  /** Memory the process tree may use, in bytes. */
  readonly memoryBytes?: number;
  /** CPU time the process may use, in seconds; the OS kills it after that. */
  readonly cpuSeconds?: number;
  /** The largest file the process may write, in bytes. */
  readonly fileBytes?: number;
  /** How many file descriptors the process may hold open at once. */
  readonly openFiles?: number;
  /**
   * How many tasks the sandbox may hold at once, the first process included. A pids cgroup counts
   * threads as tasks, so leave room for the runtime's own (Node runs about a dozen).
   */
  readonly processes?: number;
  /** Wall-clock time before the backend kills the whole tree, in seconds. */
  readonly wallSeconds?: number;
}

/**
 * What to run and under which confinement. A backend must enforce every part of it or reject it
 * from `spawn` with a `SandboxUnavailableError`; it never ignores a part it cannot enforce.
 */
export interface SandboxSpawnSpec {
  /**
   * The program to run, an absolute path (for code mode, the `node` binary). The backend makes it,
   * and the shared libraries it loads, readable and executable; it need not be in `runtimePaths`.
   */
  readonly command: string;
  readonly args: readonly string[];
  /** The process's whole environment: nothing is inherited, so list every variable it needs. */
  readonly env: Readonly<Record<string, string>>;
  /** Absolute paths the process may read and execute but never write: the runtime and its code. */
  readonly runtimePaths: readonly string[];
  /**
   * The only place the process may write: a directory made by `createSandboxWorkspace()` from
   * `@ghost/core/sandbox` in this process (the caller may put input files in it first). The backend
   * takes it over (hands it to the program's identity, shows it writable) and
   * `SandboxProcess.close()` removes it. Any other path, a symbolic link included, is refused with
   * a `SandboxWorkspaceError` before anything is changed at it.
   */
  readonly workspace: string;
  /** The working directory, inside the workspace or a runtime path. Default: the workspace. */
  readonly cwd?: string;
  /**
   * Default `'none'`. `'shared'` shares the machine's network (the process reaches what the parent
   * reaches) and must be asked for explicitly.
   */
  readonly network?: SandboxNetwork;
  /**
   * Default `'allow'`. `'deny'`: the process may not start other processes or programs (no
   * fork, no exec after it started); a backend without `subprocessDenial` rejects it.
   */
  readonly subprocesses?: 'allow' | 'deny';
  /**
   * How many pipes the process gets beyond stdin, stdout and stderr, at fd 3, 4 and so on.
   * Default 1: fd 3 carries the length-prefixed JSON protocol, never stdout.
   */
  readonly extraFds?: number;
  readonly limits?: SandboxLimits;
  /** Aborting it kills the process tree, as `kill()` does. */
  readonly signal?: AbortSignal;
}

/**
 * Output kept for diagnostics, up to a cap the backend chooses. It is read live: each property
 * reflects what the process has written so far.
 */
export interface BoundedOutput {
  /** The text kept so far, decoded as UTF-8. */
  readonly text: string;
  /** How many bytes the process wrote in all, including those not kept. */
  readonly bytesSeen: number;
  /** True once the process wrote more than the cap, so `text` is not everything. */
  readonly isTruncated: boolean;
}

/** How a sandboxed process ended, as Node's `exit` event reports it. */
export interface SandboxExit {
  /** The exit code, or `null` when a signal ended the process. */
  readonly code: number | null;
  /** The signal that ended the process, or `null` when it exited by itself. */
  readonly signal: NodeJS.Signals | null;
  /** The limit that ended the process, when the backend can tell (a cgroup out-of-memory kill, a wall timeout). */
  readonly limitExceeded?: keyof SandboxLimits;
}

/** A process running inside a sandbox, returned by {@link SandboxBackendV1.spawn}. */
export interface SandboxProcess {
  readonly pid: number;
  /** Fd 3, the protocol channel: frames go both ways on it. Always `channels[0]`. */
  readonly channel: Duplex;
  /** Every extra fd in order, from fd 3; as many as `SandboxSpawnSpec.extraFds` asked for. */
  readonly channels: readonly Duplex[];
  /** The process's stdout, kept for diagnostics only. */
  readonly stdout: BoundedOutput;
  /** The process's stderr, kept for diagnostics only. */
  readonly stderr: BoundedOutput;
  /** Settles when the process has exited; never rejects. */
  readonly exited: Promise<SandboxExit>;
  /**
   * Sends a signal (default `'SIGKILL'`) to the process tree, or to the process group when the
   * backend lacks `processTreeOwnership`. Does nothing once the process has exited.
   */
  kill(signal?: NodeJS.Signals): void;
  /**
   * Ends the process tree, closes the channels and removes the workspace. When it resolves,
   * nothing the process started is still running; when that cannot be confirmed it rejects with
   * a `CleanupError`. Safe to call more than once.
   */
  close(): Promise<void>;
}

/**
 * The contract an operating-system sandbox implements (`specificationVersion: 'sandbox-v1'`).
 * Every backend runs the `@ghost/sandbox-testkit` suite: escapes tried, limits hit, nothing left behind.
 *
 * @example
 * ```ts
 * export default defineSandboxBackend({
 *   kind: 'sandbox',
 *   specificationVersion: 'sandbox-v1',
 *   name: 'jail',
 *   platforms: ['freebsd'],
 *   async detect() {
 *     return { available: await jailIsUsable(), capabilities: jailCapabilities };
 *   },
 *   async spawn(spec) {
 *     return startJailedProcess(spec);
 *   },
 * });
 * ```
 */
export interface SandboxBackendV1 {
  readonly kind: 'sandbox';
  readonly specificationVersion: 'sandbox-v1';
  /** The name users configure, such as `bwrap`. */
  readonly name: string;
  /** The platforms the backend can ever work on; `detect()` says whether it works on this machine. */
  readonly platforms: readonly NodeJS.Platform[];
  /** Checks that the backend works here and reports what it enforces. Does not throw for "unavailable". */
  detect(): Promise<SandboxDetection>;
  /** Starts a process under `spec`. Rejects with `SandboxUnavailableError` when it cannot enforce all of it. */
  spawn(spec: SandboxSpawnSpec): Promise<SandboxProcess>;
}

/**
 * Declares a sandbox backend: fills in `kind: 'sandbox'` and `specificationVersion: 'sandbox-v1'`
 * when left out, checks its shape, and returns it frozen and typed (as every `define*` helper of a
 * plugin does). A missing `name`, `detect` or `spawn`, or another `specificationVersion`, throws a
 * `ConfigurationError` here rather than when a program first needs the sandbox.
 *
 * @example
 * ```ts
 * export default defineSandboxBackend({ name: 'jail', platforms: ['freebsd'], detect, spawn });
 * ```
 */
export function defineSandboxBackend<Declared extends PluginDeclaration<SandboxBackendV1>>(
  backend: Declared,
): Declared & SandboxBackendV1 {
  return completePlugin(backend, { kind: 'sandbox', specificationVersion: 'sandbox-v1' });
}
