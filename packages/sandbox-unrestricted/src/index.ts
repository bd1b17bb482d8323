export { unrestrictedCapabilities, unrestrictedSandbox } from './unrestricted-sandbox.js';

import { unrestrictedSandbox } from './unrestricted-sandbox.js';

/** The backend `sandbox: 'unrestricted'` loads. */
export default unrestrictedSandbox;
