/**
 * For sandbox backend authors: the contract a backend implements (`SandboxBackendV1`) and the kit
 * every Ghost backend is built on, so a backend only says how to wrap its command, how to detect
 * itself, and what it enforces. Applications do not need this entry point.
 *
 * - {@link createSandboxWorkspace} makes the workspace of one sandboxed process, in a directory only
 *   this user can enter; backends take over no other ({@link SandboxWorkspaceError}), and
 *   {@link removeSandboxWorkspace} removes one no sandbox took over.
 * - {@link planSandboxSpawn} checks a spawn spec against the backend's capabilities and applies
 *   its defaults; {@link checkSpawnDirectories} checks the workspace and working directory.
 * - {@link reapOnParentDeath} hands what a backend creates (a cgroup, a launcher process) to this
 *   process's reaper, which ends it should this process die first.
 * - {@link planSandboxPaths}, for a backend that mounts paths (or writes path rules), resolves the
 *   plan's links once: the real paths to show, and the links to recreate so that paths given
 *   through links outside every mount still resolve inside.
 * - {@link startSandboxChild} starts the (wrapped) command in its own process group with the pipes
 *   the contract needs.
 * - {@link superviseSandboxProcess} turns the child into a `SandboxProcess`: wall timer, abort,
 *   `exited` after the output drained, `kill()`, and an idempotent `close()` with a deadline and a
 *   `CleanupError`, which tears down the {@link SandboxProcessTree} and removes the workspace.
 * - {@link processGroupTree} reaches a process group; {@link BoundedOutputBuffer} keeps bounded output.
 *
 * The guide `docs/guides/sandbox-backend.md` walks through a complete backend, and
 * `@ghost/sandbox-testkit`'s `describeSandboxConformance` tests one.
 *
 * @example
 * ```ts
 * import { defineSandboxBackend, planSandboxSpawn, checkSpawnDirectories, startSandboxChild,
 *   superviseSandboxProcess, processGroupTree } from '@ghost/core/sandbox';
 *
 * export const niceSandbox = defineSandboxBackend({
 *   kind: 'sandbox', specificationVersion: 'sandbox-v1', name: 'nice', platforms: ['linux'],
 *   detect: async () => ({ available: true, capabilities }),
 *   async spawn(spec) {
 *     const plan = planSandboxSpawn(spec, { name: 'nice', capabilities }); // spec.workspace from createSandboxWorkspace()
 *     await checkSpawnDirectories(plan);
 *     const child = await startSandboxChild(plan, { backend: 'nice', command: '/usr/bin/nice', args: [plan.command, ...plan.args] });
 *     return superviseSandboxProcess({ backend: 'nice', plan, child, tree: processGroupTree(child.pid!) });
 *   },
 * });
 * ```
 *
 * @packageDocumentation
 */

export {
  CleanupError,
  ConfigurationError,
  type ConfigurationErrorCode,
  SandboxUnavailableError,
} from '../errors.js';
export type { PluginDeclaration } from '../plugin-declaration.js';
export {
  type BoundedOutput,
  defineSandboxBackend,
  noSandboxCapabilities,
  type SandboxBackendV1,
  type SandboxCapabilities,
  type SandboxCheck,
  type SandboxDetection,
  type SandboxExit,
  type SandboxLimits,
  type SandboxNetwork,
  type SandboxProcess,
  type SandboxSpawnSpec,
} from '../sandbox.js';
export { BoundedOutputBuffer, defaultBoundedOutputBytes } from './bounded-output.js';
export { processGroupTree } from './process-group-tree.js';
export { beforeDeadline, streamsSettled } from './process-waiting.js';
export { ignoreLaterErrors, type SandboxChildLaunch, startSandboxChild } from './sandbox-child.js';
export {
  planSandboxPaths,
  type SandboxPathLink,
  type SandboxPathPlan,
} from './sandbox-path-plan.js';
export type { SandboxProcessTree } from './sandbox-process-tree.js';
export { type ReapRegistration, type ReapTarget, reapOnParentDeath } from './sandbox-reaper.js';
export { planSandboxSpawn, type SandboxPlanTarget, type SandboxSpawnPlan } from './sandbox-spawn-plan.js';
export {
  type SandboxSupervisionOptions,
  sandboxCloseTimeoutMilliseconds,
  superviseSandboxProcess,
} from './sandbox-supervision.js';
export {
  createSandboxWorkspace,
  removeSandboxWorkspace,
  type SandboxWorkspaceOptions,
} from './sandbox-workspace.js';
export {
  SandboxWorkspaceError,
  type SandboxWorkspaceErrorInit,
  type SandboxWorkspaceProblem,
} from './sandbox-workspace-error.js';
export { checkSpawnDirectories } from './spawn-directories.js';
