import type { SandboxSpawnSpec } from '@ghost/core/sandbox';
import { policyOf, type SeatbeltProfileOptions } from './seatbelt-profile.js';

/**
 * The `sandbox-exec` that starts a seatbelt sandbox, by absolute path: one found through `PATH`
 * could be anyone's.
 */
export const sandboxExecPath = '/usr/bin/sandbox-exec';

/**
 * The arguments for {@link sandboxExecPath} that start `spec.command` with `spec.args` under the
 * profile {@link seatbeltProfile} generates: `['-p', profile, '-DPATH_0=…', …, '--', command,
 * …args]`. The profile goes inline (`-p`), and each path it takes as a parameter follows as a
 * `-D` definition, so no path is ever parsed as profile text. The environment, working directory
 * and descriptors are the spawner's to set; `sandbox-exec` passes them on unchanged.
 *
 * @throws ConfigurationError as {@link seatbeltProfile} does.
 *
 * @example
 * ```ts
 * import { spawn } from 'node:child_process';
 * import { sandboxExecPath, seatbeltArguments } from '@ghost/sandbox-seatbelt';
 *
 * const child = spawn(sandboxExecPath, seatbeltArguments(spec), { env: spec.env, cwd: spec.workspace });
 * ```
 */
export function seatbeltArguments(spec: SandboxSpawnSpec, options: SeatbeltProfileOptions = {}): string[] {
  const { plan, policy } = policyOf(spec, options);
  return [
    '-p',
    policy.profile,
    ...Object.entries(policy.parameters).map(([name, value]) => `-D${name}=${value}`),
    '--',
    plan.command,
    ...plan.args,
  ];
}
