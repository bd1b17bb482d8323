// One import measurement for import-breakdown.js, in a fresh Node: `node import-child.js
// <specifier>...` imports each specifier in turn (a workspace package resolved from bench/, or a
// peer from GHOST_BENCH_PEERS_DIR when the specifier starts with `peer:`) and prints the wall and
// CPU milliseconds of all the imports as one JSON line (with GHOST_BENCH_MODULE_LIST, it also
// appends the CommonJS modules loaded to that list).
import { appendFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const specifiers = process.argv.slice(2);
const peers = process.env.GHOST_BENCH_PEERS_DIR;

function resolveSpecifier(specifier) {
  if (!specifier.startsWith('peer:')) return specifier;
  if (!peers) throw new Error('GHOST_BENCH_PEERS_DIR is not set');
  return pathToFileURL(createRequire(join(peers, 'package.json')).resolve(specifier.slice('peer:'.length)))
    .href;
}

const resolved = specifiers.map(resolveSpecifier);
const cpuBefore = process.cpuUsage();
const startedAt = performance.now();
for (const specifier of resolved) await import(specifier);
const wallMs = performance.now() - startedAt;
const cpu = process.cpuUsage(cpuBefore);
// The ES loader's hooks do not see what CommonJS modules require: those are in require's cache.
const list = process.env.GHOST_BENCH_MODULE_LIST;
if (list !== undefined) {
  const required = Object.keys(createRequire(import.meta.url).cache).filter((path) => path.startsWith('/'));
  appendFileSync(list, required.map((path) => `${pathToFileURL(path).href}\n`).join(''));
}
console.log(JSON.stringify({ wallMs, cpuMs: (cpu.user + cpu.system) / 1000 }));
