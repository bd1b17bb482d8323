export { sandboxExecPath, seatbeltArguments } from './seatbelt-arguments.js';
export { type SeatbeltProfileOptions, seatbeltProfile } from './seatbelt-profile.js';
export { createSeatbeltSandbox, type SeatbeltSandboxOptions, seatbeltSandbox } from './seatbelt-sandbox.js';

import { seatbeltSandbox } from './seatbelt-sandbox.js';

/** The backend `sandbox: 'seatbelt'` (and `'native'` on macOS) loads. */
export default seatbeltSandbox;
