export type { UnprivilegedIdentity } from './bwrap-identity.js';
export { type BwrapSandboxOptions, bwrapSandbox, createBwrapSandbox } from './bwrap-sandbox.js';
export { formatDoctorReport } from './doctor.js';

import { bwrapSandbox } from './bwrap-sandbox.js';

/** The backend `sandbox: 'bwrap'` (and `'native'` on Linux) loads. */
export default bwrapSandbox;
