#!/usr/bin/env node
// ghost-bundle-host <entry.js> <out.cjs> [--external <package>]...
//
// An engine host is a fresh Node process per program, so what it loads is paid on every cold
// start. Loaded as an ES module graph (the host runtime, the engine's bindings, their
// dependencies), it costs Node's ES module loader and a resolve, read and compile per file;
// one CommonJS file is a single read and compile. Packages with native addons stay external
// (`--external isolated-vm`): they load from node_modules as before.
import { resolve } from 'node:path';
import { argv, exit } from 'node:process';
import { build } from 'rolldown';

const [entry, output, ...rest] = argv.slice(2);
const external = [];
for (let index = 0; index < rest.length; index += 2) {
  if (rest[index] !== '--external' || rest[index + 1] === undefined) usage();
  external.push(rest[index + 1]);
}
if (entry === undefined || output === undefined) usage();

const problems = [];
await build({
  input: resolve(entry),
  platform: 'node',
  external: (id) => external.some((name) => id === name || id.startsWith(`${name}/`)),
  // A warning here is code the bundle would run differently (an `import.meta` member CommonJS
  // lacks, say): the build fails rather than ship a host that breaks when it starts.
  onLog(level, log) {
    if (level === 'warn') problems.push(log.message);
  },
  output: {
    format: 'cjs',
    file: resolve(output),
    codeSplitting: false,
    // `import()` of a Node builtin (Emscripten's loader does one) would start Node's ES module
    // loader, a few milliseconds of every start; `require` gives the same module at once.
    dynamicImportInCjs: false,
  },
});
if (problems.length > 0) {
  console.error(`ghost-bundle-host: ${entry} cannot be bundled as it is:\n${problems.join('\n')}`);
  exit(1);
}

function usage() {
  console.error('usage: ghost-bundle-host <entry.js> <out.cjs> [--external <package>]...');
  exit(2);
}
