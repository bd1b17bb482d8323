// Loads Pyodide the way every Python host (and the snapshot maker) does: from this package's own
// copy, with nothing from the network, no packages, no host directory mounted, and a `js` module
// that offers nothing.
import { constants as fsConstants } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import { loadPyodide } from 'pyodide';

const indexURL = `${dirname(createRequire(import.meta.url).resolve('pyodide'))}/`;

// Pyodide's NODEFS reads `process.binding('constants')` when it loads, which Node's permission
// model refuses. NODEFS is never mounted here; it needs only the file flags, which fs gives too.
function allowNodefsStaticInit() {
  const original = process.binding;
  process.binding = (name) => (name === 'constants' ? { fs: fsConstants } : original.call(process, name));
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
