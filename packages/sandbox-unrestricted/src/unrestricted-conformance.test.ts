import { describeSandboxConformance } from '@ghost/sandbox-testkit';
import { unrestrictedSandbox } from './index.js';

// The backend that contains nothing: the contract cases must pass, and nearly every escape case
// is skipped with the capability it does not declare.
await describeSandboxConformance({ name: 'unrestricted', create: () => unrestrictedSandbox });
