// The V8 engine host: the script the sandbox runs for each program (under --no-node-snapshot).
// The build bundles it, with everything it imports but isolated-vm, into `dist/host.cjs`, the
// file the engine starts.
import { runProcessHost } from '@ghost/code-mode/host';
import { createV8Driver } from './v8-driver.js';

void runProcessHost(createV8Driver());
