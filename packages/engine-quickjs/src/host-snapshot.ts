// The QuickJS host as a Node startup snapshot. `ghost-quickjs-snapshot` runs the bundle of this
// file (`dist/host-snapshot.cjs`) under `node --build-snapshot`: everything it loads (the host
// runtime, quickjs-emscripten, Node's own modules) and QuickJS's wasm bytes are in the snapshot,
// so a host started from it goes straight to `runProcessHost`. Nothing here may create what a
// snapshot cannot hold (wasm, handles, timers) before `main` runs.
import { readFileSync } from 'node:fs';
import { startupSnapshot } from 'node:v8';
import { runProcessHost } from '@ghost/code-mode/host';
import { createQuickJSDriver } from './quickjs-driver.js';

// The builder passes the wasm's path: `node --build-snapshot dist/host-snapshot.cjs <wasm>`.
const wasmPath = process.argv[2];
if (wasmPath === undefined) throw new Error("Build the host snapshot with the path of QuickJS's wasm.");
const wasm = new Uint8Array(readFileSync(wasmPath));

startupSnapshot.setDeserializeMainFunction(() => {
  void runProcessHost(createQuickJSDriver(Promise.resolve(wasm)));
});
