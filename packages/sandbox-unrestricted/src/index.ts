/**
 * For applications that explicitly choose no operating-system sandbox (`sandbox: 'unrestricted'`):
 * programs still run in a fresh engine, but the host process has the parent's authority. Only for
 * trusted code, tests and development.
 *
 * @example
 * ```ts
 * import { unrestrictedSandbox } from '@ghost/sandbox-unrestricted';
 * ```
 *
 * @packageDocumentation
 */

export { unrestrictedCapabilities, unrestrictedSandbox } from './unrestricted-sandbox.js';

import { unrestrictedSandbox } from './unrestricted-sandbox.js';

/** The backend `sandbox: 'unrestricted'` loads. */
export default unrestrictedSandbox;
