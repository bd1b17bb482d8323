import { createRuntime, type StreamEvent } from '@ghost/core';
import type { SandboxCapabilities } from '@ghost/core/sandbox';
import { unrestrictedSandbox } from '@ghost/sandbox-unrestricted';
import { afterEach } from 'vitest';
import type { CodeModePlacement, EngineV1 } from '../../engine.js';
import { checkEngineCapabilities } from '../../engine-capability.js';
import {
  type CodeModeSessionOptions,
  type OpenedCodeModeSession,
  openCodeModeSession,
} from '../../open-code-mode-session.js';
import type { SandboxChoice } from '../../parent/sandbox-factory.js';
import type { EngineConformanceCapability } from './engine-conformance-capability.js';

/** The options of `describeEngineConformance` and {@link createConformanceContext}. */
export interface EngineConformanceOptions {
  /** The engine under test. */
  readonly engine: EngineV1;
  /**
   * The sandbox to run it in: a registered name or a backend object. Default `'unrestricted'`.
   * Pass the backend itself (`bwrapSandbox`) when the test's working directory cannot import it.
   */
  readonly sandbox?: SandboxChoice;
  /** Where programs run: `'process'` (default), `'session'` or `'thread'`, one the engine lists. */
  readonly placement?: CodeModePlacement;
  /**
   * What the engine can do of what some cases need (see {@link EngineConformanceCapability}).
   * Default: the engine definition's `capabilities` (all of them when it declares none). A case
   * that needs one not listed is reported as skipped, with the reason in its name; declare
   * exactly what the engine does, so nothing it cannot do is tested and nothing it can do is
   * left out.
   */
  readonly capabilities?: readonly EngineConformanceCapability[];
}

/** A session opened by {@link ConformanceContext.open}, with the stream events it emitted. */
export type ConformanceSession = OpenedCodeModeSession & { readonly events: StreamEvent[] };

/** What every group of conformance cases runs against: the engine, where it runs, and sessions. */
export interface ConformanceContext {
  /** The engine under test. */
  readonly engine: EngineV1;
  /** The sandbox its hosts run in, as given (default `'unrestricted'`). */
  readonly sandbox: SandboxChoice;
  /** The sandbox's name, for case names and messages. */
  readonly sandboxName: string;
  /** Where programs run (default `'process'`). */
  readonly placement: CodeModePlacement;
  /** The capabilities the engine declared, or the option gave (all of them when neither did). */
  readonly capabilities: ReadonlySet<EngineConformanceCapability>;
  /**
   * What the sandbox enforces on this machine, from its `detect()` (asked once), or `undefined`
   * when it cannot be found or is unavailable here (its cases then fail on opening a session).
   */
  sandboxCapabilities(): Promise<SandboxCapabilities | undefined>;
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
  const capabilities = new Set(
    checkEngineCapabilities(options.capabilities ?? engine.capabilities, 'describeEngineConformance'),
  );
  let detecting: Promise<SandboxCapabilities | undefined> | undefined;
  const sandboxCapabilities = () => {
    detecting ??= detectSandbox(sandbox);
    return detecting;
  };
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

  return { engine, sandbox, sandboxName, placement, capabilities, sandboxCapabilities, open };
}

/** What the sandbox enforces here, as code mode will find it: by name through a fresh runtime. */
async function detectSandbox(sandbox: SandboxChoice): Promise<SandboxCapabilities | undefined> {
  let backend = typeof sandbox === 'string' ? undefined : sandbox;
  if (sandbox === unrestrictedSandbox.name) backend = unrestrictedSandbox;
  if (backend === undefined) {
    const runtime = createRuntime();
    try {
      backend = await runtime.registry.sandbox(sandbox as string);
    } catch {
      return undefined;
    } finally {
      await runtime.close();
    }
  }
  const detection = await backend.detect();
  return detection.available ? detection.capabilities : undefined;
}
