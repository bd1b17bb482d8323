// The V8 engine host: the script the sandbox runs for each program (under --no-node-snapshot).
// The build bundles it, with everything it imports but isolated-vm, into `dist/host.cjs`, the
// file the engine starts.
import { createRequire } from 'node:module';
import { runProcessHost } from '@ghost/code-mode/host';
import type ivm from 'isolated-vm';
import { isolatedVmArgument } from './isolated-vm-argument.js';
import { createV8Driver } from './v8-driver.js';

/**
 * The isolated-vm the engine checked, from the addon named on the command line (isolated-vm's own
 * entry is `require(<addon>).ivm`), not resolved from this file: the install beside the host may
 * be a build for another Node.js.
 */
function loadIsolatedVm(): typeof ivm {
  const argument = process.argv.find((candidate) => candidate.startsWith(isolatedVmArgument));
  if (argument === undefined) {
    throw new Error(`the V8 host needs ${isolatedVmArgument}<file>; it is started by @ghost/engine-v8 only`);
  }
  // An absolute path loads the same from any file; the host's own path is one Node allows.
  const addon = argument.slice(isolatedVmArgument.length);
  return (createRequire(process.argv[1] ?? process.cwd())(addon) as { ivm: typeof ivm }).ivm;
}

void runProcessHost(createV8Driver(loadIsolatedVm()));
