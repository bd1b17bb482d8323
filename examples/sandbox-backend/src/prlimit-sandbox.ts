import { access, constants } from 'node:fs/promises';
import {
  checkSpawnDirectories,
  defineSandboxBackend,
  noSandboxCapabilities,
  planSandboxSpawn,
  processGroupTree,
  type SandboxBackendV1,
  type SandboxCapabilities,
  type SandboxDetection,
  type SandboxLimits,
  type SandboxProcess,
  type SandboxSpawnSpec,
  SandboxUnavailableError,
  startSandboxChild,
  superviseSandboxProcess,
} from '@ghost/core/sandbox';

/**
 * What this backend enforces, and nothing more: the child sees exactly `spec.env`, and prlimit(1)
 * sets three rlimits the kernel applies. It isolates neither the network nor the filesystem, denies
 * no subprocess and no system call, and reaches only its own process group, so a child that calls
 * `setsid` escapes `close()`. It does not claim `memoryLimit`: `RLIMIT_AS` bounds address space,
 * not memory, and would stop Node from starting at all.
 */
export const prlimitCapabilities: SandboxCapabilities = Object.freeze({
  ...noSandboxCapabilities,
  environmentIsolation: true,
  cpuLimit: true,
  fileSizeLimit: true,
  openFilesLimit: true,
});

/** Where util-linux installs prlimit. */
const prlimitLocations = ['/usr/bin/prlimit', '/bin/prlimit'];

/** The options of {@link createPrlimitSandbox}. */
export interface PrlimitSandboxOptions {
  /** The prlimit binary. Default: the first of `/usr/bin/prlimit` and `/bin/prlimit` that is executable. */
  readonly prlimitPath?: string;
}

/**
 * A minimal sandbox backend, the example of the guide `docs/guides/sandbox-backend.md`: it runs
 * the command under prlimit(1) in its own process group, and leaves supervision (channels, bounded
 * output, the wall clock, `kill()`, `close()`) to `@ghost/core/sandbox`. Code mode refuses it as a
 * sandbox, because it neither owns the process tree nor denies subprocesses.
 *
 * @example
 * ```ts
 * const backend = createPrlimitSandbox();
 * const workspace = await createSandboxWorkspace(); // from @ghost/core/sandbox
 * const child = await backend.spawn({ command: process.execPath, args: ['-e', 'spin()'], env: {},
 *   runtimePaths: [], workspace, network: 'shared', limits: { cpuSeconds: 1 } });
 * (await child.exited).limitExceeded; // 'cpuSeconds'
 * ```
 */
export function createPrlimitSandbox(options: PrlimitSandboxOptions = {}): SandboxBackendV1 {
  const candidates = options.prlimitPath === undefined ? prlimitLocations : [options.prlimitPath];
  let finding: Promise<string | undefined> | undefined;
  const findPrlimit = () => {
    finding ??= firstExecutable(candidates);
    return finding;
  };
  return defineSandboxBackend({
    kind: 'sandbox',
    specificationVersion: 'sandbox-v1',
    name: 'prlimit',
    platforms: ['linux'],
    async detect(): Promise<SandboxDetection> {
      if (process.platform !== 'linux') {
        return {
          available: false,
          reason: 'prlimit works on Linux only.',
          capabilities: noSandboxCapabilities,
        };
      }
      if ((await findPrlimit()) === undefined) {
        return {
          available: false,
          reason: `prlimit is not at ${candidates.join(' or ')}: install util-linux (apt-get install util-linux).`,
          capabilities: noSandboxCapabilities,
        };
      }
      return { available: true, capabilities: prlimitCapabilities };
    },
    async spawn(spec: SandboxSpawnSpec): Promise<SandboxProcess> {
      const prlimit = await findPrlimit();
      if (prlimit === undefined) {
        throw new SandboxUnavailableError('The prlimit backend cannot run here: call detect() to see why.', {
          backend: 'prlimit',
        });
      }
      const plan = planSandboxSpawn(spec, { name: 'prlimit', capabilities: prlimitCapabilities });
      await checkSpawnDirectories(plan);
      // prlimit would start and then fail to exec a missing command; refuse it before anything runs.
      await access(plan.command, constants.X_OK).catch((error: unknown) => {
        throw new SandboxUnavailableError(
          `The prlimit backend cannot run ${plan.command}: ${(error as Error).message}. Check that it exists and is executable.`,
          { cause: error, backend: 'prlimit', command: plan.command },
        );
      });
      plan.signal?.throwIfAborted();
      const child = await startSandboxChild(plan, {
        backend: 'prlimit',
        command: prlimit,
        args: [...rlimitArguments(plan.limits), '--', plan.command, ...plan.args],
      });
      return superviseSandboxProcess({ backend: 'prlimit', plan, child, tree: processGroupTree(child.pid!) });
    },
  });
}

/** prlimit's arguments for the limits asked for, and always no core file. */
export function rlimitArguments(limits: SandboxLimits): string[] {
  const { cpuSeconds, fileBytes, openFiles } = limits;
  return [
    // Soft at the limit, so the program gets SIGXCPU and `exited` names the limit; hard a second later.
    ...(cpuSeconds === undefined ? [] : [`--cpu=${Math.ceil(cpuSeconds)}:${Math.ceil(cpuSeconds) + 1}`]),
    ...(fileBytes === undefined ? [] : [`--fsize=${Math.floor(fileBytes)}`]),
    ...(openFiles === undefined ? [] : [`--nofile=${Math.floor(openFiles)}`]),
    '--core=0',
  ];
}

async function firstExecutable(paths: readonly string[]): Promise<string | undefined> {
  for (const path of paths) {
    if (
      await access(path, constants.X_OK).then(
        () => true,
        () => false,
      )
    )
      return path;
  }
  return undefined;
}

/** The prlimit backend with default options. */
export const prlimitSandbox: SandboxBackendV1 = createPrlimitSandbox();
