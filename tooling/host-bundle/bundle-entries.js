#!/usr/bin/env node
// ghost-bundle-entries <dist> <entry.js>...
//
// Rewrites a package's ES module entry points, in place, as bundles: each entry becomes one file
// holding the modules only it uses, and the modules two entries share go into chunks beside them
// in <dist>, so every module still exists once and a class is the same class whichever entry an
// application imports it from. Node's ES loader resolves, reads, compiles and links every file
// of a module graph: an entry of a hundred small files costs several times the same code in one.
// Other packages stay imports (they are their own bundles); `import()` of a file of the package
// stays lazy, as a chunk. The compiler's other output (the .d.ts files the entries' types point
// at, and modules loaded by path, such as a worker's script) is left as it is.
import { copyFile, mkdtemp, readdir, rm } from 'node:fs/promises';
import { dirname, isAbsolute, join, relative, resolve } from 'node:path';
import { argv, exit } from 'node:process';
import { build } from 'rolldown';

const [distArgument, ...entries] = argv.slice(2);
if (distArgument === undefined || entries.length === 0) usage();
const dist = resolve(distArgument);

const input = {};
for (const entry of entries) {
  const path = resolve(entry);
  const name = relative(dist, path);
  if (name.startsWith('..') || !name.endsWith('.js')) usage();
  input[name.slice(0, -'.js'.length)] = path;
}

const problems = [];
const staging = await mkdtemp(join(dirname(dist), '.bundle-entries-'));
try {
  await build({
    input,
    platform: 'node',
    // Anything not a path is another package (or a Node builtin): it stays an import.
    external: (id) => !id.startsWith('.') && !isAbsolute(id),
    onLog(level, log) {
      if (level === 'warn') problems.push(log.message);
    },
    output: {
      dir: staging,
      format: 'esm',
      entryFileNames: '[name].js',
      chunkFileNames: 'chunk-[name]-[hash].js',
      // What two or more entries share goes into one chunk, not one per combination of entries:
      // each chunk is another file to load.
      codeSplitting: { groups: [{ name: 'shared', minShareCount: 2 }] },
      sourcemap: true,
      // The TSDoc is in the .d.ts files editors read; in the modules Node loads it is only bytes
      // to scan at every import.
      comments: { jsdoc: false, legal: true, annotation: true },
    },
  });
  if (problems.length > 0) {
    console.error(`ghost-bundle-entries: the entries cannot be bundled as they are:\n${problems.join('\n')}`);
    exit(1);
  }
  for (const file of await readdir(staging, { recursive: true, withFileTypes: true })) {
    if (!file.isFile()) continue;
    const from = join(file.parentPath, file.name);
    await copyFile(from, join(dist, relative(staging, from)));
  }
} finally {
  await rm(staging, { recursive: true, force: true });
}

function usage() {
  console.error('usage: ghost-bundle-entries <dist> <dist/entry.js>...');
  exit(2);
}
