import { describeSandboxConformance } from '@ghost/sandbox-testkit';
import { seatbeltSandbox } from './index.js';

// The whole conformance and escape suite against the real /usr/bin/sandbox-exec: on macOS it must
// pass (a Mac where seatbelt is unavailable fails, naming why). Elsewhere every case is registered
// skipped, with the reason in its name: enforcement can only be proven by macOS itself.
const isMac = process.platform === 'darwin';

await describeSandboxConformance({
  name: isMac
    ? 'seatbelt'
    : `seatbelt (skipped: the profile is enforced only by macOS; this is ${process.platform})`,
  create: () => seatbeltSandbox,
  skipWhenUnavailable: !isMac,
});
