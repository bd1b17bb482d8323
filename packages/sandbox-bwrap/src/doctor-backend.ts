import { type SandboxBackendV1, SandboxUnavailableError } from '@ghost/core';
import { Registry } from '@ghost/core/plugin';
import { createBwrapSandbox } from './bwrap-sandbox.js';

/**
 * The backend `ghost-doctor` examines: the one `sandbox: 'native'` means on `platform`. On Linux
 * it is bubblewrap, always detected afresh (a cached detection would repeat what held when it was
 * made). On macOS it is seatbelt, loaded as code mode loads it: `@ghost/sandbox-seatbelt` from
 * the application's dependencies. Elsewhere there is none.
 *
 * @throws PluginNotInstalledError on macOS when `@ghost/sandbox-seatbelt` is not installed, with
 *   the command that installs it; SandboxUnavailableError on a platform with no native sandbox.
 */
export async function doctorBackend(
  platform: NodeJS.Platform,
  registry: Registry = new Registry(),
): Promise<SandboxBackendV1> {
  if (platform === 'linux') return createBwrapSandbox({ detectionCache: 'off' });
  if (platform === 'darwin') return registry.sandbox('seatbelt');
  throw new SandboxUnavailableError(
    `Ghost has no native sandbox for ${platform}: bubblewrap on Linux and seatbelt on macOS are the ones it knows. Name sandbox 'unrestricted' explicitly only if you accept running programs with no containment.`,
    { platform },
  );
}
