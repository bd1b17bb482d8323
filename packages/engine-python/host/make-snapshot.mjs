// Makes the Python engine's memory snapshot: Pyodide loaded, the prelude installed and warmed up,
// written to the path given (a file of the engine's own format: see load-pyodide.mjs). The engine
// runs it in a short-lived child process of its own (src/python-snapshot.ts), never in a host.
import { createHash } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { installPrelude, loadPyodideQuietly, snapshotMagic } from './load-pyodide.mjs';

const [target] = process.argv.slice(2);
if (target === undefined) throw new Error('usage: make-snapshot.mjs <file>');
const pyodide = await loadPyodideQuietly({ makeSnapshot: true });
installPrelude(pyodide);
const snapshot = Buffer.from(pyodide.makeMemorySnapshot());
const digest = createHash('sha256').update(snapshot).digest();
writeFileSync(target, Buffer.concat([snapshotMagic, digest, snapshot]));
