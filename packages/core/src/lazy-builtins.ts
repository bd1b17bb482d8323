// Node's built-in modules that take milliseconds of CPU to load and that only running code needs
// (an id, a digest, a spawned process, a temporary folder): each is loaded the first time it is
// used, so importing Ghost does not pay for it (docs/decisions/2026-12-07-round-trip-and-imports.md).
// `process.getBuiltinModule` (Node 20.16 and later) also skips what an ES `import` of a built-in
// adds: building its module namespace, which runs every lazy getter the built-in has (node:crypto's
// webcrypto, node:fs's promises).
import type * as ChildProcessModule from 'node:child_process';
import type * as CryptoModule from 'node:crypto';
import type * as FsModule from 'node:fs';
import type * as FsPromisesModule from 'node:fs/promises';
import type * as StreamModule from 'node:stream';

/**
 * `node:fs`, which Node has loaded before any module runs: taken without an ES `import`, whose
 * namespace would run its lazy getters (loading node:fs/promises among others, ~7 ms).
 */
export const nodeFs = (): typeof FsModule => process.getBuiltinModule('node:fs');

/** `node:crypto`, loaded on first use. */
export const nodeCrypto = (): typeof CryptoModule => process.getBuiltinModule('node:crypto');

/** `node:child_process`, loaded on first use. */
export const nodeChildProcess = (): typeof ChildProcessModule =>
  process.getBuiltinModule('node:child_process');

/** `node:stream`, loaded on first use. */
export const nodeStream = (): typeof StreamModule => process.getBuiltinModule('node:stream');

/** `node:fs/promises`, loaded on first use. */
export const nodeFsPromises = (): typeof FsPromisesModule => process.getBuiltinModule('node:fs/promises');

/** A random UUID (version 4) from `node:crypto`. */
export const randomUUID = (): string => nodeCrypto().randomUUID();

/** The SHA-256 digest of `text`, in lowercase hexadecimal. */
export const sha256Hex = (text: string): string =>
  nodeCrypto().createHash('sha256').update(text).digest('hex');
