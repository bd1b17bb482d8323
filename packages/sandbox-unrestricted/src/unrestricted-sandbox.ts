import {
  checkSpawnDirectories,
  defineSandboxBackend,
  noSandboxCapabilities,
  planSandboxSpawn,
  processGroupTree,
  type SandboxBackendV1,
  type SandboxCapabilities,
  type SandboxDetection,
  type SandboxProcess,
  type SandboxSpawnSpec,
  startSandboxChild,
  superviseSandboxProcess,
} from '@ghost/core/sandbox';

/** The platforms with process groups, which `kill()` and `close()` rely on to reach the children. */
const supportedPlatforms: readonly NodeJS.Platform[] = ['linux', 'darwin', 'freebsd', 'openbsd'];

/**
 * What the unrestricted backend enforces: only that the child sees exactly `spec.env`. It owns no
 * process tree (a child that leaves the process group escapes `kill()`), denies nothing, isolates
 * neither the network nor the filesystem and enforces no resource limit but the wall clock.
 */
export const unrestrictedCapabilities: SandboxCapabilities = Object.freeze({
  ...noSandboxCapabilities,
  environmentIsolation: true,
});

/**
 * The sandbox backend that contains nothing: it runs the program as a plain child process of
 * Ghost, in its own process group, with exactly the environment it was given. The program can
 * read and write anything the user can, use the network and start programs that outlive it by
 * leaving the group. A user must name it explicitly; it is never a fallback.
 *
 * It is honest about what it cannot do: `spawn` rejects with a `SandboxUnavailableError` unless
 * `network: 'shared'` is passed, and for any limit but `wallSeconds`, which it enforces with a timer
 * that kills the process group (`exited` then reports `limitExceeded: 'wallSeconds'`). A malformed
 * spec or a missing workspace rejects with a `ConfigurationError`, a program that cannot be started
 * with a `SandboxUnavailableError` naming it, and an already aborted `signal` with its reason; in
 * each case nothing was started and the workspace is left to the caller.
 *
 * `kill()` signals the whole process group, even after the first process exited, until `close()`.
 * `close()` kills the group, waits up to 5 s until no process of it runs, closes the pipes and
 * removes the workspace, or rejects with a `CleanupError`.
 *
 * @example
 * ```ts
 * const child = await unrestrictedSandbox.spawn({
 *   command: process.execPath,
 *   args: ['host.js'],
 *   env: {},
 *   runtimePaths: [],
 *   workspace: await createSandboxWorkspace(), // from @ghost/core/sandbox
 *   network: 'shared',
 *   limits: { wallSeconds: 60 },
 * });
 * child.channel.write(frame);
 * await child.close(); // kills the group and removes the workspace
 * ```
 */
export const unrestrictedSandbox: SandboxBackendV1 = defineSandboxBackend({
  kind: 'sandbox',
  specificationVersion: 'sandbox-v1',
  name: 'unrestricted',
  platforms: supportedPlatforms,
  async detect(): Promise<SandboxDetection> {
    if (!supportedPlatforms.includes(process.platform)) {
      return {
        available: false,
        reason: `The unrestricted backend needs process groups, which ${process.platform} does not have; it works on ${supportedPlatforms.join(', ')}.`,
        capabilities: noSandboxCapabilities,
      };
    }
    return { available: true, capabilities: unrestrictedCapabilities };
  },
  async spawn(spec: SandboxSpawnSpec): Promise<SandboxProcess> {
    const plan = planSandboxSpawn(spec, { name: 'unrestricted', capabilities: unrestrictedCapabilities });
    await checkSpawnDirectories(plan);
    // Starting a program only to kill it at once would be wasted work; reject with the abort reason.
    plan.signal?.throwIfAborted();
    const child = await startSandboxChild(plan, {
      backend: 'unrestricted',
      command: plan.command,
      args: plan.args,
    });
    // 'spawn' has fired, so the operating system gave the child a pid.
    return superviseSandboxProcess({
      backend: 'unrestricted',
      plan,
      child,
      tree: processGroupTree(child.pid!),
    });
  },
});
