// The V8 engine host: the script the sandbox runs for each program (under --no-node-snapshot).
import { runProcessHost } from '@ghost/code-mode/host';
import { createV8Driver } from './v8-driver.js';

await runProcessHost(createV8Driver());
