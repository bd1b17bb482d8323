import { ghostProject } from '@ghost/vitest-config';

// isolated-vm needs --no-node-snapshot in the process that creates isolates (the tests' own
// checks do; the engine's hosts get the flag from the engine).
export default ghostProject('engine-v8', { test: { execArgv: ['--no-node-snapshot'] } });
