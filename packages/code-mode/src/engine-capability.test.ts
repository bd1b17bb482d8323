import { afterEach, describe, expect, it, vi } from 'vitest';
import { type EngineCapability, warnUnboundedMemory } from './engine-capability.js';

const noMemoryLimit = { memoryLimit: false } as never;

function engine(name: string, capabilities?: readonly EngineCapability[]) {
  return capabilities === undefined ? { name } : { name, capabilities };
}

describe('warnUnboundedMemory', () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it('warns once per engine and sandbox when neither bounds a program memory', () => {
    const emitWarning = vi.spyOn(process, 'emitWarning').mockImplementation(() => {});
    const sandbox = { name: 'unrestricted', capabilities: noMemoryLimit };
    warnUnboundedMemory(engine('unbounded-a', []), sandbox, 1024);
    warnUnboundedMemory(engine('unbounded-a', []), sandbox, 1024);
    expect(emitWarning).toHaveBeenCalledTimes(1);
    expect(emitWarning).toHaveBeenCalledWith(
      expect.stringContaining(
        "Engine 'unbounded-a' cannot bound a program's memory, and sandbox 'unrestricted' enforces no memory limit here, so limits.memoryBytes (1024 bytes) is not enforced.",
      ),
      { type: 'GhostWarning', code: 'CODE_MODE_MEMORY_LIMIT_UNENFORCED' },
    );
  });

  it('says nothing when the engine declares guest-memory-limit (or nothing) or the sandbox limits memory', () => {
    const emitWarning = vi.spyOn(process, 'emitWarning').mockImplementation(() => {});
    warnUnboundedMemory(
      engine('bounded', ['guest-memory-limit']),
      { name: 'u', capabilities: noMemoryLimit },
      1,
    );
    warnUnboundedMemory(engine('claims-all'), { name: 'u', capabilities: noMemoryLimit }, 1);
    warnUnboundedMemory(
      engine('unbounded-b', []),
      { name: 'bwrap', capabilities: { memoryLimit: true } as never },
      1,
    );
    expect(emitWarning).not.toHaveBeenCalled();
  });
});
