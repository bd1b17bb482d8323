import { Registry } from '@ghost/core/plugin';
import { afterEach, describe, expect, it } from 'vitest';
import { seatbeltSandbox } from './index.js';

const realPlatform = process.platform;

function pretendPlatform(platform: NodeJS.Platform): void {
  Object.defineProperty(process, 'platform', { value: platform, configurable: true });
}

afterEach(() => {
  Object.defineProperty(process, 'platform', { value: realPlatform, configurable: true });
});

describe("sandbox 'native'", () => {
  it('loads this package on macOS, and its default export is the seatbelt backend', async () => {
    // The registry picks the package by platform; the import is real, from this package.
    const imported: string[] = [];
    const registry = new Registry({
      importModule: (specifier) => {
        imported.push(specifier);
        return import(specifier);
      },
    });
    pretendPlatform('darwin');
    const native = await registry.sandbox('native');
    expect(imported).toEqual(['@ghost/sandbox-seatbelt']);
    expect(native).toBe(seatbeltSandbox);
    expect(await registry.sandbox('seatbelt')).toBe(seatbeltSandbox);
  });
});
