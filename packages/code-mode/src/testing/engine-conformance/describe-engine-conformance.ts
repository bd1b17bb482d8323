import { describe } from 'vitest';
import { CodeModeConfigurationError } from '../../errors.js';
import { describeAgentCases } from './agent-cases.js';
import { describeBadProgramCases } from './bad-program-cases.js';
import {
  type ConformanceContext,
  createConformanceContext,
  type EngineConformanceOptions,
} from './conformance-context.js';
import { describeControlOperationCases } from './control-operation-cases.js';
import { describeGuestApiCases } from './guest-api-cases.js';
import { describeHostCleanupCases } from './host-cleanup-cases.js';
import { describeResultPlacementCases } from './result-placement-cases.js';

/**
 * The groups of conformance cases, by name, in the order they run. Each is also exported on its
 * own (`describeGuestApiCases`, ...) to be run with a context from `createConformanceContext`.
 */
export const engineConformanceGroups = {
  'guest-api': describeGuestApiCases,
  'bad-programs': describeBadProgramCases,
  'control-operations': describeControlOperationCases,
  'hosts-and-cleanup': describeHostCleanupCases,
  'in-an-agent': describeAgentCases,
  'results-and-placement': describeResultPlacementCases,
} as const satisfies Readonly<Record<string, (context: ConformanceContext) => void>>;

/** The name of a group of conformance cases, such as `'guest-api'`. */
export type EngineConformanceGroup = keyof typeof engineConformanceGroups;

/** The options of {@link describeEngineConformance}. */
export interface DescribeEngineConformanceOptions extends EngineConformanceOptions {
  /** The groups to run, in their usual order whatever the order here. Default: all of them. */
  readonly groups?: readonly EngineConformanceGroup[];
}

/**
 * The engine conformance suite (vitest): everything code mode promises, run end to end against
 * one engine with real hosts, the real broker and the real tool pipeline. Every engine, ours and
 * third parties', calls it from a test file. `groups` runs part of it, such as while an engine
 * is being written; an engine ships passing all of it. `capabilities` says what the engine can do
 * of what some cases need; a case it cannot do is reported as skipped, with the reason in its
 * name. Each case runs its programs in the engine's `language` (JavaScript or Python); a case with
 * none in it (one that tests what only JavaScript has) is skipped the same way. See
 * docs/guides/custom-engine.md.
 *
 * @example
 * ```ts
 * import { describeEngineConformance } from '@ghost/code-mode/testing';
 * import { quickjsEngine } from '@ghost/engine-quickjs';
 *
 * describeEngineConformance({ engine: quickjsEngine });
 * describeEngineConformance({ engine: quickjsEngine, groups: ['guest-api', 'control-operations'] });
 * // An engine that cannot bound a guest's memory itself lists no 'guest-memory-limit'.
 * describeEngineConformance({ engine: myEngine, capabilities: [] });
 * ```
 */
export function describeEngineConformance(options: DescribeEngineConformanceOptions): void {
  const groups = options.groups ?? (Object.keys(engineConformanceGroups) as EngineConformanceGroup[]);
  for (const group of groups) {
    if (!Object.hasOwn(engineConformanceGroups, group)) {
      throw new CodeModeConfigurationError(
        `describeEngineConformance: no group of cases is named ${JSON.stringify(group)}; the groups are ${Object.keys(engineConformanceGroups).join(', ')}.`,
      );
    }
  }
  const context = createConformanceContext(options);
  describe(`engine '${context.engine.name}' (${context.placement} placement, sandbox '${context.sandboxName}')`, () => {
    for (const [name, describeCases] of Object.entries(engineConformanceGroups)) {
      if (groups.includes(name as EngineConformanceGroup)) describeCases(context);
    }
  });
}
