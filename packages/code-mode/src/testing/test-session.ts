import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRuntime, type Invocation, RunContext, type StreamEvent, type Tool } from '@ghost/core';
import { runToolCall, ToolCallBudget, ToolLock } from '@ghost/core/internal';
import type { CodeModePlacement, CodeModeSession, EngineV1 } from '../engine.js';
import { type CodeModeLimits, resolveCodeModeLimits } from '../limits.js';
import { createSandboxFactory, type SandboxChoice } from '../sandbox-factory.js';
import { ToolBroker } from '../tool-broker.js';
import { ToolCatalog } from '../tool-catalog.js';

/** The options of {@link openTestSession}. */
export interface TestSessionOptions {
  readonly engine: EngineV1;
  readonly tools?: readonly Tool[];
  /** Default `'unrestricted'`. */
  readonly sandbox?: SandboxChoice;
  readonly placement?: CodeModePlacement;
  readonly limits?: Partial<CodeModeLimits>;
  /** Default 10,000 ms, so a test that forgets to finish fails fast. */
  readonly observationWindowMs?: number;
  readonly prewarm?: boolean;
  /** The shared `maxToolCalls` of the pretend run. Default 1,000. */
  readonly maxToolCalls?: number;
}

/** A session opened outside an agent, with what a test needs to look at. */
export interface TestSession {
  readonly session: CodeModeSession;
  /** The tool events (`tool_start`, `tool_stop`) the brokered calls emitted. */
  readonly events: StreamEvent[];
  /** The directory program workspaces are made in; empty once the session is closed. */
  readonly workspaceRoot: string;
  /** Closes the session, then removes the workspace root. */
  close(): Promise<void>;
}

/**
 * Opens an engine's session the way code mode does for a run (real catalog, real broker, the
 * real tool pipeline, a real sandbox factory), but without an agent, so tests can drive `execute`,
 * `wait` and `stop` directly.
 *
 * @example
 * ```ts
 * const { session, close } = await openTestSession({ engine: quickjsEngine, tools: [lookup] });
 * const result = await session.execute('await tools.lookup({ query: "refunds" })');
 * await close();
 * ```
 */
export async function openTestSession(options: TestSessionOptions): Promise<TestSession> {
  const workspaceRoot = await mkdtemp(join(tmpdir(), 'ghost-code-mode-test-'));
  const runtime = createRuntime({ workspaceRoot });
  const tools = options.tools ?? [];
  const limits = resolveCodeModeLimits(options.limits ?? {});
  const catalog = ToolCatalog.fromTools(tools, 'Test session');
  const controller = new AbortController();
  const invocation: Invocation = Object.freeze({
    invocationId: 'test-invocation',
    runId: 'test-run',
    agentName: 'test',
    input: '',
    actorId: undefined,
    context: Object.freeze({}),
    metadata: Object.freeze({}),
    deadline: undefined,
  });
  const events: StreamEvent[] = [];
  const environment = {
    runContext: new RunContext({ invocation, signal: controller.signal }),
    emit: (type: string, data: unknown) => {
      events.push({ type, data } as unknown as StreamEvent);
    },
    budget: new ToolCallBudget(options.maxToolCalls ?? 1_000),
    lock: new ToolLock(),
    tools: new Map(tools.map((tool) => [tool.name, tool])),
  };
  const sandbox = await createSandboxFactory(options.sandbox ?? 'unrestricted', runtime, limits);
  const broker = new ToolBroker({ catalog, limits, callTool: (call) => runToolCall(call, environment) });
  const session = await options.engine.open({
    broker,
    sandbox,
    limits,
    catalog,
    placement: options.placement ?? 'process',
    observationWindowMs: options.observationWindowMs ?? 10_000,
    prewarm: options.prewarm ?? true,
  });
  return {
    session,
    events,
    workspaceRoot,
    async close() {
      try {
        await session.close();
      } finally {
        controller.abort();
        await rm(workspaceRoot, { recursive: true, force: true });
      }
    },
  };
}

/** The entries left in a directory (program workspaces that were not removed). */
export async function leftoverEntries(directory: string): Promise<string[]> {
  return readdir(directory).catch(() => []);
}
