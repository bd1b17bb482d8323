import type { ConformanceCase, SuiteContext } from './conformance-case.js';
import { contractCases } from './contract-cases.js';
import { environmentEscapeCases } from './environment-escape-cases.js';
import { filesystemEscapeCases } from './filesystem-escape-cases.js';
import { identityEscapeCases } from './identity-escape-cases.js';
import { networkEscapeCases } from './network-escape-cases.js';
import { processEscapeCases } from './process-escape-cases.js';
import { resourceEscapeCases } from './resource-escape-cases.js';
import { syscallEscapeCases } from './syscall-escape-cases.js';
import { workspaceCases } from './workspace-cases.js';

/** A named group of cases: one `describe` of the suite. */
export interface ConformanceCaseGroup {
  readonly name: string;
  readonly cases: readonly ConformanceCase[];
}

/**
 * Every case of the suite for `context`, in the order it registers them: the contract first, then
 * the escape groups. Kept apart from the registration so the suite's own tests can ask which cases
 * run on a platform, such as macOS, that the machine running them is not.
 */
export function conformanceCaseGroups(
  context: SuiteContext,
): [ConformanceCaseGroup, ...ConformanceCaseGroup[]] {
  return [
    { name: 'contract', cases: [...contractCases(context), ...workspaceCases()] },
    { name: 'filesystem', cases: filesystemEscapeCases(context.platform) },
    { name: 'identity', cases: identityEscapeCases() },
    { name: 'network', cases: networkEscapeCases() },
    { name: 'processes', cases: processEscapeCases(context) },
    { name: 'resource limits', cases: resourceEscapeCases() },
    { name: 'system calls and privileges', cases: syscallEscapeCases() },
    { name: 'environment', cases: environmentEscapeCases(context.platform) },
  ];
}
