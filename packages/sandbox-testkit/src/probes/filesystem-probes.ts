import { nodeProbe } from './node-probe.js';

/** Tries to read each path (a directory is listed) and reports an attempt per path. */
export function readPathsProbe(paths: readonly string[]): string {
  return nodeProbe(`
const fs = require('node:fs');
const read = (path) => (fs.statSync(path).isDirectory() ? fs.readdirSync(path).join(',') : fs.readFileSync(path, 'utf8'));
const results = {};
for (const path of ${JSON.stringify(paths)}) results[path] = await attempt(() => read(path));
report(results);
`);
}

/** Tries to create each file with `content` and reports an attempt per path. */
export function writePathsProbe(paths: readonly string[], content: string): string {
  return nodeProbe(`
const fs = require('node:fs');
const results = {};
for (const path of ${JSON.stringify(paths)}) results[path] = await attempt(() => fs.writeFileSync(path, ${JSON.stringify(content)}));
report(results);
`);
}

/**
 * Makes a symlink in the workspace to a directory outside, then reads a file through it and writes
 * one into it: the link itself is harmless, following it must not reach outside.
 */
export function symlinkEscapeProbe(target: string, fileName: string): string {
  return nodeProbe(`
const fs = require('node:fs');
const path = require('node:path');
const link = await attempt(() => fs.symlinkSync(${JSON.stringify(target)}, 'escape'));
const read = await attempt(() => fs.readFileSync(path.join('escape', ${JSON.stringify(fileName)}), 'utf8'));
const write = await attempt(() => fs.writeFileSync(path.join('escape', 'planted.txt'), 'planted'));
report({ link, read, write });
`);
}

/** Hardlinks a file outside into the workspace, then reads it and writes through the link. */
export function hardlinkEscapeProbe(target: string): string {
  return nodeProbe(`
const fs = require('node:fs');
const link = await attempt(() => fs.linkSync(${JSON.stringify(target)}, 'escape'));
const read = await attempt(() => fs.readFileSync('escape', 'utf8'));
const write = await attempt(() => fs.appendFileSync('escape', 'planted'));
report({ link, read, write });
`);
}

/**
 * Runs `ps` (a runtime path of the spawn) with `psArguments` to list another process's command line
 * and environment, as a program with subprocesses allowed could; reports the attempt with its output.
 */
export function listProcessEnvironmentProbe(ps: string, psArguments: readonly string[]): string {
  return nodeProbe(`
const { execFileSync } = require('node:child_process');
const listing = await attempt(() => execFileSync(${JSON.stringify(ps)}, ${JSON.stringify(psArguments)}, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }));
report({ listing });
`);
}
