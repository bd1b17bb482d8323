import { nodeProbe } from './node-probe.js';

/**
 * Leaves three kinds of descendants behind, each carrying `marker`: a plain background child, a
 * detached one in its own session (`setsid`), and a grandchild whose parent already exited (a
 * double fork). Prints `ready` once all run, and keeps running itself.
 */
export function orphansProbe(marker: string): string {
  const sleeper = `['-e', 'setTimeout(() => {}, 30000)', ${JSON.stringify(marker)}]`;
  const doubleFork = `require('node:child_process').spawn(process.execPath, ${sleeper}, { detached: true, stdio: 'ignore' }).on('spawn', () => process.exit(0))`;
  return nodeProbe(`
const { spawn } = require('node:child_process');
const started = (child) => new Promise((resolve, reject) => { child.once('spawn', resolve); child.once('error', reject); });
const exited = (child) => new Promise((resolve) => child.once('exit', resolve));
await started(spawn(process.execPath, ${sleeper}, { stdio: 'ignore' }));
await started(spawn(process.execPath, ${sleeper}, { detached: true, stdio: 'ignore' }));
await exited(spawn(process.execPath, ['-e', ${JSON.stringify(doubleFork)}, ${JSON.stringify(marker)}], { stdio: 'ignore' }));
setTimeout(() => {}, 30000);
process.stdout.write('ready\\n');
`);
}

/** Starts `command` `count` times, one after another, keeping every child; reports how many started. */
export function spawnManyProbe(command: string, commandArguments: readonly string[], count: number): string {
  return nodeProbe(`
const { spawn } = require('node:child_process');
const startOne = () => new Promise((resolve) => {
  try {
    const child = spawn(${JSON.stringify(command)}, ${JSON.stringify(commandArguments)}, { stdio: 'ignore' });
    child.once('spawn', () => resolve(undefined));
    child.once('error', (error) => resolve(error.code || String(error)));
  } catch (error) {
    resolve(error.code || String(error));
  }
});
let started = 0;
const failures = {};
for (let index = 0; index < ${count}; index++) {
  const failure = await startOne();
  if (failure === undefined) started += 1;
  else failures[failure] = (failures[failure] || 0) + 1;
}
report({ started, failures });
// The children keep running, and their handles would keep this process alive until they end.
process.exit(0);
`);
}

/** Tries to start another program, synchronously and asynchronously, and reports both attempts. */
export const startProgramProbe = nodeProbe(`
const { spawn, spawnSync } = require('node:child_process');
const synchronous = await attempt(() => {
  const result = spawnSync(process.execPath, ['-e', 'process.stdout.write("child ran")'], { encoding: 'utf8' });
  if (result.error) throw result.error;
  return result.stdout;
});
const asynchronous = await attempt(() => new Promise((resolve, reject) => {
  const child = spawn(process.execPath, ['-e', ''], { stdio: 'ignore' });
  child.once('error', reject);
  child.once('exit', (code, signal) => resolve({ code, signal }));
}));
report({ synchronous, asynchronous });
`);
