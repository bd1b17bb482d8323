// The QuickJS engine host: the script the sandbox runs for each program.
import { runProcessHost } from '@ghost/code-mode/host';
import { createQuickJSDriver } from './quickjs-driver.js';

await runProcessHost(createQuickJSDriver());
