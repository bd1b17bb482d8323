import { type EngineCapability, engineCapabilities } from '../../engine-capability.js';

/**
 * What an engine can do that some conformance cases need and not every engine has: an
 * `EngineCapability` (exported by `@ghost/code-mode`), declared on the engine definition's
 * `capabilities`. A case that needs one the engine does not declare is reported as skipped, with
 * the reason in its name. `describeEngineConformance({ capabilities })` overrides the engine's.
 *
 * See docs/guides/custom-engine.md.
 */
export type EngineConformanceCapability = EngineCapability;

/** Every {@link EngineConformanceCapability}: what an engine that declares none is taken to have. */
export const engineConformanceCapabilities: readonly EngineCapability[] = engineCapabilities;
