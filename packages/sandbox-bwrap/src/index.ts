/**
 * For applications on Linux: the bubblewrap sandbox backend that code mode's `sandbox: 'native'`
 * (and `'bwrap'`) loads. Applications usually only install it; `bwrapSandbox` and
 * `createBwrapSandbox` are for registering it explicitly or with options, and `formatDoctorReport`
 * explains what this machine enforces.
 *
 * @example
 * ```ts
 * import { createBwrapSandbox } from '@ghost/sandbox-bwrap';
 * ```
 *
 * @packageDocumentation
 */

export type { UnprivilegedIds } from './bwrap-identity.js';
export { type BwrapSandboxOptions, bwrapSandbox, createBwrapSandbox } from './bwrap-sandbox.js';
export { formatDoctorReport } from './doctor.js';

import { bwrapSandbox } from './bwrap-sandbox.js';

/** The backend `sandbox: 'bwrap'` (and `'native'` on Linux) loads. */
export default bwrapSandbox;
