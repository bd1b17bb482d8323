import type { SandboxCapabilities } from '@ghost/core/sandbox';
import { CodeModeConfigurationError } from './errors.js';

/**
 * What an engine can do beyond the contract, declared in its definition's `capabilities`:
 *
 * - `'guest-memory-limit'`: the engine stops a guest that grows past `limits.memoryBytes` itself
 *   (QuickJS's and V8's heap limits do; a `node:vm` context cannot). Without it only a sandbox
 *   that enforces a memory limit bounds a program's memory; elsewhere code mode warns that
 *   nothing does (see {@link engineCapabilities}).
 *
 * Code mode reads them at run time, and the conformance suite skips, with the reason in its
 * name, a case that needs one the engine does not declare. See docs/guides/custom-engine.md.
 */
export type EngineCapability = (typeof engineCapabilities)[number];

/**
 * Every {@link EngineCapability}. An engine that declares no `capabilities` is taken to have all
 * of them, so it is held to every conformance case.
 */
export const engineCapabilities = ['guest-memory-limit'] as const;

/** The capabilities an engine declared, checked: each must be one code mode knows. */
export function checkEngineCapabilities(listed: unknown, where: string): readonly EngineCapability[] {
  if (listed === undefined) return engineCapabilities;
  if (!Array.isArray(listed)) {
    throw new CodeModeConfigurationError(
      `${where}: capabilities must be a list such as ['guest-memory-limit'], got ${JSON.stringify(listed)}.`,
      { option: 'capabilities' },
    );
  }
  for (const capability of listed) {
    if (!(engineCapabilities as readonly unknown[]).includes(capability)) {
      throw new CodeModeConfigurationError(
        `${where}: no engine capability is named ${JSON.stringify(capability)}; the capabilities are ${engineCapabilities.join(', ')}.`,
        { option: 'capabilities' },
      );
    }
  }
  return listed as EngineCapability[];
}

const warnedUnboundedMemory = new Set<string>();

/**
 * Warns, once per process for each engine and sandbox, when nothing will bound a program's
 * memory: the engine does not declare `'guest-memory-limit'` and the sandbox enforces no memory
 * limit here. A process warning (`GhostWarning`, code `CODE_MODE_MEMORY_LIMIT_UNENFORCED`), not an
 * error: see docs/decisions/2026-12-06-engine-capabilities.md.
 */
export function warnUnboundedMemory(
  engine: { readonly name: string; readonly capabilities?: readonly EngineCapability[] },
  sandbox: { readonly name: string; readonly capabilities: SandboxCapabilities },
  memoryBytes: number,
): void {
  const capabilities = engine.capabilities ?? engineCapabilities;
  if (capabilities.includes('guest-memory-limit') || sandbox.capabilities.memoryLimit) return;
  const key = `${engine.name}\u0000${sandbox.name}`;
  if (warnedUnboundedMemory.has(key)) return;
  warnedUnboundedMemory.add(key);
  process.emitWarning(
    `Engine '${engine.name}' cannot bound a program's memory, and sandbox '${sandbox.name}' enforces no memory limit here, so limits.memoryBytes (${memoryBytes} bytes) is not enforced. Use a sandbox with a memory limit (bubblewrap with cgroups), or an engine that declares 'guest-memory-limit' (quickjs, v8).`,
    { type: 'GhostWarning', code: 'CODE_MODE_MEMORY_LIMIT_UNENFORCED' },
  );
}
