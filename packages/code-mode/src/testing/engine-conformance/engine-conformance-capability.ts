/**
 * What an engine can do that some conformance cases need and not every engine has. An engine
 * lists the ones it has in `describeEngineConformance({ capabilities })`; a case that needs one
 * the engine does not list is reported as skipped, with the reason in its name.
 *
 * - `'guest-memory-limit'`: the engine stops a guest that grows past `limits.memoryBytes` itself
 *   (QuickJS's and V8's heap limits do). Without it, the memory-bomb case still runs where the
 *   sandbox enforces a memory limit, which then ends the host; elsewhere it is skipped.
 *
 * See docs/guides/custom-engine.md.
 */
export type EngineConformanceCapability = (typeof engineConformanceCapabilities)[number];

/** Every {@link EngineConformanceCapability}: what an engine that lists none is assumed to have. */
export const engineConformanceCapabilities = ['guest-memory-limit'] as const;
