// Loads Pyodide the way every Python host (and the snapshot maker) does: from this package's own
// copy, with nothing from the network, no packages, no host directory mounted, and a `js` module
// that offers nothing.
import { createHash } from 'node:crypto';
import { constants as fsConstants, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import { loadPyodide } from 'pyodide';

const indexURL = `${dirname(createRequire(import.meta.url).resolve('pyodide'))}/`;

/** The first bytes of a snapshot file: a tag, then the SHA-256 of the snapshot after it. */
export const snapshotMagic = Buffer.from('GHOSTPY1');
export const snapshotHeaderBytes = snapshotMagic.length + 32;

/** The Python prelude's text; the module `_ghost_prelude` in the interpreter. */
export const preludeText = readFileSync(new URL('./guest_prelude.py', import.meta.url), 'utf8');

// Pyodide's NODEFS reads `process.binding('constants')` when it loads, which Node's permission
// model refuses. NODEFS is never mounted here; it needs only the file flags, which fs gives too.
function allowNodefsStaticInit() {
  const original = process.binding;
  process.binding = (name) => (name === 'constants' ? { fs: fsConstants } : original.call(process, name));
}

/**
 * The snapshot inside a snapshot file, or undefined when the file is not one or is damaged.
 * @param {Buffer} file
 */
export function snapshotPayload(file) {
  if (file.length <= snapshotHeaderBytes || !file.subarray(0, snapshotMagic.length).equals(snapshotMagic))
    return undefined;
  const payload = file.subarray(snapshotHeaderBytes);
  const digest = createHash('sha256').update(payload).digest();
  return digest.equals(file.subarray(snapshotMagic.length, snapshotHeaderBytes)) ? payload : undefined;
}

/**
 * @param {{ snapshot?: Uint8Array, makeSnapshot?: boolean }} options
 */
export async function loadPyodideQuietly({ snapshot, makeSnapshot = false }) {
  allowNodefsStaticInit();
  return loadPyodide({
    indexURL,
    packageCacheDir: indexURL,
    // `import js` gives this: nothing of the host's globals.
    jsglobals: Object.freeze(Object.create(null)),
    env: { HOME: '/home/pyodide' },
    stdin: () => null,
    stdout: () => {},
    stderr: () => {},
    packages: [],
    checkAPIVersion: true,
    ...(makeSnapshot ? { _makeSnapshot: true } : {}),
    ...(snapshot === undefined ? {} : { _loadSnapshot: snapshot }),
  });
}

/**
 * Runs the prelude as the module `_ghost_prelude` (which its warm-up then exercises) and returns it.
 * @param {import('pyodide').PyodideAPI} pyodide
 */
export function installPrelude(pyodide) {
  const install = pyodide.runPython(
    [
      'def _install(text):',
      '    import sys, types',
      '    module = types.ModuleType("_ghost_prelude")',
      '    exec(compile(text, "<ghost prelude>", "exec"), module.__dict__)',
      '    sys.modules["_ghost_prelude"] = module',
      '    module.warm_up()',
      '    return module',
      '_install',
    ].join('\n'),
    { globals: pyodide.globals.get('dict')() },
  );
  return install(preludeText);
}
