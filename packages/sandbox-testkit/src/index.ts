/**
 * The conformance and escape suite every Ghost sandbox backend runs (vitest): the
 * `SandboxBackendV1` contract, escapes tried, limits hit, nothing left behind.
 *
 * @example
 * ```ts
 * import { describeSandboxConformance } from '@ghost/sandbox-testkit';
 * import { bwrapSandbox } from '@ghost/sandbox-bwrap';
 *
 * await describeSandboxConformance({ name: 'bwrap', create: () => bwrapSandbox });
 * ```
 *
 * @packageDocumentation
 */

export {
  describeSandboxConformance,
  type SandboxConformanceOptions,
} from './describe-sandbox-conformance.js';
