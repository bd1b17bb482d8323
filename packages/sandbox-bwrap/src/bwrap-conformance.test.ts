import { describeSandboxConformance } from '@ghost/sandbox-testkit';
import { bwrapSandbox, createBwrapSandbox } from './bwrap-sandbox.js';

// The whole contract and escape suite, as the default backend and with cgroups off (memory then
// bounded by sampling, and the process-limit cases skipped with that reason). A machine without
// bubblewrap skips every case and says so rather than failing.
await describeSandboxConformance({ name: 'bwrap', create: () => bwrapSandbox, skipWhenUnavailable: true });
await describeSandboxConformance({
  name: 'bwrap (cgroups off)',
  create: () => createBwrapSandbox({ cgroups: 'off' }),
  skipWhenUnavailable: true,
});
