import { readFile } from 'node:fs';
import { createRequire } from 'node:module';

/**
 * The path of QuickJS's wasm, found the way `require` finds it from this file or from a host
 * bundle built from it (both sit one directory below the package root, next to node_modules).
 */
function quickjsWasmPath(): string {
  return createRequire(import.meta.url).resolve('@jitl/quickjs-wasmfile-release-sync/wasm');
}

/** Reads QuickJS's wasm, for a driver to compile. */
export function readQuickJSWasm(): Promise<Uint8Array> {
  const path = quickjsWasmPath();
  // The callback API: `node:fs/promises` would load a dozen more of Node's modules at every start.
  return new Promise((resolve, reject) =>
    readFile(path, (error, bytes) => (error ? reject(error) : resolve(bytes))),
  );
}
