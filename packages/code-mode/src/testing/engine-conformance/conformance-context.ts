import type { StreamEvent } from '@ghost/core';
import { afterEach } from 'vitest';
import type { CodeModePlacement, EngineV1 } from '../../engine.js';
import {
  type CodeModeSessionOptions,
  type OpenedCodeModeSession,
  openCodeModeSession,
} from '../../open-code-mode-session.js';
import type { SandboxChoice } from '../../parent/sandbox-factory.js';

/** The options of `describeEngineConformance` and {@link createConformanceContext}. */
export interface EngineConformanceOptions {
  /** The engine under test. */
  readonly engine: EngineV1;
  /**
   * The sandbox to run it in: a registered name or a backend object. Default `'unrestricted'`.
   * Pass the backend itself (`bwrapSandbox`) when the test's working directory cannot import it.
   */
  readonly sandbox?: SandboxChoice;
  readonly placement?: CodeModePlacement;
}

/** A session opened by {@link ConformanceContext.open}, with the stream events it emitted. */
export type ConformanceSession = OpenedCodeModeSession & { readonly events: StreamEvent[] };

/** What every group of conformance cases runs against: the engine, where it runs, and sessions. */
export interface ConformanceContext {
  readonly engine: EngineV1;
  readonly sandbox: SandboxChoice;
  /** The sandbox's name, for case names and messages. */
  readonly sandboxName: string;
  readonly placement: CodeModePlacement;
  /**
   * Opens a session of the engine in this sandbox and placement (observation window 10 s),
   * closed after the case.
   */
  open(session?: Omit<CodeModeSessionOptions, 'engine'>): Promise<ConformanceSession>;
}

/**
 * Makes the context the case groups share and registers the `afterEach` that closes the sessions
 * each case opened. Call it inside the `describe` the cases run in (or at a test file's top).
 */
export function createConformanceContext(options: EngineConformanceOptions): ConformanceContext {
  const { engine } = options;
  const sandbox = options.sandbox ?? 'unrestricted';
  const sandboxName = typeof sandbox === 'string' ? sandbox : sandbox.name;
  const placement = options.placement ?? 'process';
  let opened: OpenedCodeModeSession[] = [];

  const open = async (session: Omit<CodeModeSessionOptions, 'engine'> = {}) => {
    const events: StreamEvent[] = [];
    const test = await openCodeModeSession({
      onEvent: (event) => events.push(event),
      engine,
      sandbox,
      placement,
      observationWindowMs: 10_000,
      ...session,
    });
    opened.push(test);
    return { ...test, events };
  };

  afterEach(async () => {
    for (const test of opened) await test.close();
    opened = [];
  });

  return { engine, sandbox, sandboxName, placement, open };
}
