// The QuickJS engine host: the script the sandbox runs for each program. The build bundles it,
// with everything it imports, into `dist/host.cjs`, the file the engine starts.
import { runProcessHost } from '@ghost/code-mode/host';
import { createQuickJSDriver } from './quickjs-driver.js';
import { readQuickJSWasm } from './quickjs-wasm.js';

void runProcessHost(createQuickJSDriver(readQuickJSWasm()));
