import { fileURLToPath } from 'node:url';
import {
  defineHostEngine,
  type EngineV1,
  type HostSessionStart,
  javascriptInstructions,
  packageRuntimePaths,
} from '@ghost/code-mode/engine';
import { isolatedVmArgument } from './isolated-vm-argument.js';
import {
  findIsolatedVm,
  findIsolatedVmAddon,
  IsolatedVmUnavailableError,
  isolatedVmProblem,
} from './isolated-vm-check.js';

const packageRoot = fileURLToPath(new URL('..', import.meta.url));
// The host always runs from the build (a plain `node` cannot run TypeScript sources).
const hostScript = fileURLToPath(new URL('../dist/host.cjs', import.meta.url));

// Node's permission model lets the host read exactly these: its code, its dependencies' and
// isolated-vm's own directory, with its native addon (isolated-vm's dependencies only fetch or
// build the addon at install time). Found when the first host starts, not at import.
const runtimePaths = () => packageRuntimePaths(packageRoot, { withoutDependencies: ['isolated-vm'] });

/**
 * isolated-vm needs `--no-node-snapshot` on Node 20 and later, and Node's permission model
 * refuses native addons without `--allow-addons`.
 */
const hostNodeOptions = Object.freeze(['--no-node-snapshot', '--allow-addons']);

/** Where the engine looks for isolated-vm; tests point it elsewhere. */
export interface V8EngineSettings {
  /** The directory isolated-vm is resolved from. Default: this package's. */
  readonly resolveFrom: string;
}

/**
 * Makes a V8 engine. The default export, {@link v8Engine}, is the one to use; this exists so
 * tests can check how the engine refuses a broken isolated-vm.
 *
 * @internal
 */
export function createV8Engine(settings: V8EngineSettings = { resolveFrom: packageRoot }): EngineV1 {
  // isolated-vm is checked on the first session, never at import, and again after a problem,
  // so a fixed install is picked up without a restart.
  let checked: Promise<string | undefined> | undefined;
  const prepare = async (): Promise<HostSessionStart> => {
    checked ??= isolatedVmProblem(settings.resolveFrom);
    const problem = await checked;
    if (problem !== undefined) {
      checked = undefined;
      throw new IsolatedVmUnavailableError(problem, { engine: 'v8' });
    }
    // The host loads the addon the preflight checked, named here, so the two never disagree (a
    // build for another Node.js beside the host, say).
    const install = findIsolatedVm(settings.resolveFrom);
    // As found, maybe through a package manager's link: the sandbox backend mounts its real path
    // and recreates the link where no mount shows it (planSandboxPaths in @ghost/core/sandbox).
    const directory = install?.directory;
    const addon = directory === undefined ? undefined : findIsolatedVmAddon(directory);
    if (directory === undefined || addon === undefined) {
      checked = undefined;
      throw new IsolatedVmUnavailableError(
        `isolated-vm changed in ${settings.resolveFrom} while the engine checked it: open the session again.`,
      );
    }
    return { hostArguments: [`${isolatedVmArgument}${addon}`], readPaths: [directory] };
  };
  return defineHostEngine({
    name: 'v8',
    language: 'javascript',
    runtimePaths,
    placements: ['process', 'session'],
    // The isolate's heap limit and the host's resident-memory watch stop a guest past limits.memoryBytes.
    capabilities: ['guest-memory-limit'],
    instructions: (context) => javascriptInstructions(context, { interpreter: 'a fresh V8 isolate' }),
    host: { script: hostScript, nodeOptions: hostNodeOptions },
    prepare,
  });
}

/**
 * The V8 engine: each program runs in a fresh V8 isolate (isolated-vm) inside a fresh host
 * process started through the sandbox, with one host started ahead. With `placement: 'session'`
 * one sandboxed host serves the session's programs while they complete, a fresh isolate each.
 * No thread placement.
 */
export const v8Engine: EngineV1 = createV8Engine();
