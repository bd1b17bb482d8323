/**
 * For applications on macOS and for backend authors: the seatbelt (`sandbox-exec`) sandbox, its
 * generated deny-default profile and the arguments that apply it.
 *
 * @example
 * ```ts
 * import { seatbeltProfile } from '@ghost/sandbox-seatbelt';
 * ```
 *
 * @packageDocumentation
 */

export { sandboxExecPath, seatbeltArguments } from './seatbelt-arguments.js';
export { type SeatbeltProfileOptions, seatbeltProfile } from './seatbelt-profile.js';
export { createSeatbeltSandbox, type SeatbeltSandboxOptions, seatbeltSandbox } from './seatbelt-sandbox.js';

import { seatbeltSandbox } from './seatbelt-sandbox.js';

/** The backend `sandbox: 'seatbelt'` (and `'native'` on macOS) loads. */
export default seatbeltSandbox;
