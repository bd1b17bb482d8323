import { GhostError } from '@ghost/core';
import { type GhostErrorInit, markErrorClass } from '@ghost/core/plugin';

/** The codes of the errors `@ghost/assemblies` throws (listed in `docs/errors.md`). */
export type AssemblyErrorCode =
  | 'ASSEMBLY_LIMIT_REACHED'
  | 'ASSEMBLY_ROUTING_FAILED'
  | 'ASSEMBLY_STEP_TIMEOUT';

/**
 * An assembly reached one of its limits: `maxSteps` (a graph's node runs, a swarm's member
 * turns) or a swarm's `maxHandoffRepeats` (two members handing off back and forth). Ends the run
 * as `failed`.
 */
export class AssemblyLimitError extends GhostError {
  static {
    markErrorClass(AssemblyLimitError, 'AssemblyLimitError');
  }

  /** This error's stable code (see `docs/errors.md`). */
  declare readonly code: 'ASSEMBLY_LIMIT_REACHED';
  /** Which limit: `maxSteps` or `maxHandoffRepeats`. */
  readonly limit: 'maxSteps' | 'maxHandoffRepeats';
  /** The limit's value. */
  readonly value: number;

  constructor(
    message: string,
    init: GhostErrorInit<'ASSEMBLY_LIMIT_REACHED'> & {
      readonly limit: 'maxSteps' | 'maxHandoffRepeats';
      readonly value: number;
    },
  ) {
    super(message, { ...init, code: 'ASSEMBLY_LIMIT_REACHED' });
    this.limit = init.limit;
    this.value = init.value;
  }
}

/**
 * An assembly could not decide where to go next: no edge of a graph's node matched and the node
 * is not a finish node, or the graph stopped before reaching one. Ends the run as `failed`.
 */
export class AssemblyRoutingError extends GhostError {
  static {
    markErrorClass(AssemblyRoutingError, 'AssemblyRoutingError');
  }

  /** This error's stable code (see `docs/errors.md`). */
  declare readonly code: 'ASSEMBLY_ROUTING_FAILED';

  constructor(message: string, init: GhostErrorInit<'ASSEMBLY_ROUTING_FAILED'> = {}) {
    super(message, { ...init, code: 'ASSEMBLY_ROUTING_FAILED' });
  }
}

/** An assembly step ran longer than its `timeoutMs` (a swarm member's): its agent was stopped. */
export class AssemblyStepTimeoutError extends GhostError {
  static {
    markErrorClass(AssemblyStepTimeoutError, 'AssemblyStepTimeoutError');
  }

  /** This error's stable code (see `docs/errors.md`). */
  declare readonly code: 'ASSEMBLY_STEP_TIMEOUT';
  /** The step that timed out. */
  readonly step: string;
  readonly timeoutMs: number;

  constructor(
    message: string,
    init: GhostErrorInit<'ASSEMBLY_STEP_TIMEOUT'> & { readonly step: string; readonly timeoutMs: number },
  ) {
    super(message, { ...init, code: 'ASSEMBLY_STEP_TIMEOUT' });
    this.step = init.step;
    this.timeoutMs = init.timeoutMs;
  }
}
