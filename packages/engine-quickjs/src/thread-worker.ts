// The QuickJS worker for `placement: 'thread'`: piscina runs one program per task in it.
import { createThreadTask } from '@ghost/code-mode/host';
import { createQuickJSDriver } from './quickjs-driver.js';
import { readQuickJSWasm } from './quickjs-wasm.js';

export default createThreadTask(createQuickJSDriver(readQuickJSWasm()));
