import { SandboxUnavailableError } from '@ghost/core';
import { PluginNotInstalledError, Registry } from '@ghost/core/plugin';
import { defineSandboxBackend, noSandboxCapabilities } from '@ghost/core/sandbox';
import { describe, expect, it } from 'vitest';
import { doctorBackend } from './doctor-backend.js';

/** A registry whose imports are recorded and answered from `modules`, as the application's would be. */
function registryWith(modules: Record<string, unknown>) {
  const imported: string[] = [];
  const registry = new Registry({
    importModule: async (specifier) => {
      imported.push(specifier);
      if (specifier in modules) return modules[specifier];
      throw Object.assign(new Error(`Cannot find package '${specifier}' imported from /app`), {
        code: 'ERR_MODULE_NOT_FOUND',
      });
    },
  });
  return { registry, imported };
}

describe('the backend ghost-doctor examines', () => {
  it('is bubblewrap on Linux, imported from nowhere', async () => {
    const { registry, imported } = registryWith({});
    const backend = await doctorBackend('linux', registry);
    expect(backend.name).toBe('bwrap');
    expect(imported).toEqual([]);
  });

  it("is the application's @ghost/sandbox-seatbelt on macOS", async () => {
    const seatbelt = defineSandboxBackend({
      kind: 'sandbox',
      specificationVersion: 'sandbox-v1',
      name: 'seatbelt',
      platforms: ['darwin'],
      detect: async () => ({
        available: false,
        reason: 'a test backend',
        capabilities: noSandboxCapabilities,
      }),
      spawn: () => Promise.reject(new Error('not used')),
    });
    const { registry, imported } = registryWith({ '@ghost/sandbox-seatbelt': { default: seatbelt } });
    expect(await doctorBackend('darwin', registry)).toBe(seatbelt);
    expect(imported).toEqual(['@ghost/sandbox-seatbelt']);
  });

  it('says how to install seatbelt on macOS when it is missing', async () => {
    const { registry } = registryWith({});
    const finding = doctorBackend('darwin', registry);
    await expect(finding).rejects.toSatisfy((error) => PluginNotInstalledError.isInstance(error));
    await expect(finding).rejects.toThrow(/@ghost\/sandbox-seatbelt/);
  });

  it('is none elsewhere, and says so', async () => {
    const { registry } = registryWith({});
    const finding = doctorBackend('win32', registry);
    await expect(finding).rejects.toSatisfy((error) => SandboxUnavailableError.isInstance(error));
    await expect(finding).rejects.toThrow(/no native sandbox for win32/);
  });
});
