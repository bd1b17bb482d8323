import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRuntime, type Runtime, type StreamEvent, type Tool } from '@ghost/core';
import { type Invocation, RunContext } from '@ghost/core/plugin';
import { runToolCall, ToolCallBudget, ToolLock } from '@ghost/core/tool-calls';
import { defaultObservationWindowMs } from './code-mode.js';
import type { CodeModePlacement, CodeModeSession, EngineV1 } from './engine.js';
import { warnUnboundedMemory } from './engine-capability.js';
import { requireEngineMemoryFloor } from './engine-memory-floor.js';
import { type CodeModeLimits, checkCodeModeLimits, resolveCodeModeLimits } from './limits.js';
import {
  checkSpareHosts,
  createSandboxFactory,
  type SandboxChoice,
  sandboxName,
} from './parent/sandbox-factory.js';
import { requireContainablePlacement } from './parent/thread-placement.js';
import { ToolBroker } from './tool-broker.js';
import { ToolCatalog } from './tool-catalog.js';

/** The options of {@link openCodeModeSession}. */
export interface CodeModeSessionOptions {
  readonly engine: EngineV1;
  readonly tools?: readonly Tool[];
  /**
   * Default `'native'`, as for `codeMode()`: where it cannot contain programs, opening fails with a
   * `SandboxUnavailableError`. Name `'unrestricted'` to run programs with no OS sandbox.
   */
  readonly sandbox?: SandboxChoice;
  /**
   * Default `'process'`. `'thread'` runs programs inside this process and is refused (with a
   * `CodeModeConfigurationError`) unless `sandbox` is `'unrestricted'`.
   */
  readonly placement?: CodeModePlacement;
  readonly limits?: Partial<CodeModeLimits>;
  /** How long each observation watches a program. Default 60,000 ms. */
  readonly observationWindowMs?: number;
  readonly prewarm?: boolean;
  /** Receives the `tool_start` / `tool_stop` events of the brokered calls, as a run would stream them. */
  readonly onEvent?: (event: StreamEvent) => void;
  /** How many tool calls all programs of the session may make together (an agent's `maxToolCalls`). Default 1,000. */
  readonly maxToolCalls?: number;
  /**
   * The runtime whose spare hosts the session shares, and under whose `workspaceRoot` program
   * workspaces are made. Without it the session gets a runtime of its own, closed with it.
   */
  readonly runtime?: Runtime;
  /** How many engine hosts the runtime keeps started ahead, at most; see `CodeModeOptions.spareHosts`. Default 2. */
  readonly spareHosts?: number;
}

/** A session opened outside an agent. */
export interface OpenedCodeModeSession {
  readonly session: CodeModeSession;
  /**
   * The directory program workspaces are made in: the runtime's `workspaceRoot` when one was
   * given, else one of the session's own, empty once the session is closed.
   */
  readonly workspaceRoot: string;
  /** Closes the session, then removes the workspace root. */
  close(): Promise<void>;
}

/**
 * Opens an engine's session the way code mode does for a run (the catalog, the broker, the tool
 * pipeline, the sandbox), but without an agent or a model: for applications that run programs
 * themselves, for benchmarks, and for tests that drive `execute`, `wait` and `stop` directly.
 *
 * @example
 * ```ts
 * const { session, close } = await openCodeModeSession({ engine: quickjsEngine, tools: [lookup] });
 * const result = await session.execute('await tools.lookup({ query: "refunds" })');
 * await close();
 * ```
 */
export async function openCodeModeSession(options: CodeModeSessionOptions): Promise<OpenedCodeModeSession> {
  // Bad options throw before anything exists that would need removing.
  const where = 'openCodeModeSession()';
  const tools = options.tools ?? [];
  const limits = resolveCodeModeLimits(checkCodeModeLimits(options.limits, where));
  requireEngineMemoryFloor(options.engine, limits.memoryBytes, where);
  const placement = options.placement ?? 'process';
  const sandboxChoice = options.sandbox ?? 'native';
  requireContainablePlacement(placement, sandboxName(sandboxChoice), where);
  const spareHosts = checkSpareHosts(options.spareHosts, where);
  const catalog = ToolCatalog.fromTools(tools, 'Code-mode session');
  const sharedRuntime = options.runtime;
  // node:fs/promises is loaded here, not at import (docs/decisions/2026-12-07-round-trip-and-imports.md).
  const { mkdtemp, rm } = process.getBuiltinModule('node:fs/promises');
  const workspaceRoot = sharedRuntime?.workspaceRoot ?? (await mkdtemp(join(tmpdir(), 'ghost-code-mode-')));
  const runtime = sharedRuntime ?? createRuntime({ workspaceRoot });
  // A runtime of the session's own holds its spares; it ends with the session.
  const release = async () => {
    if (sharedRuntime) return;
    try {
      await runtime.close();
    } finally {
      await rm(workspaceRoot, { recursive: true, force: true });
    }
  };
  const controller = new AbortController();
  const invocation: Invocation = Object.freeze({
    invocationId: 'code-mode-session',
    runId: 'code-mode-session',
    agentName: 'code-mode-session',
    input: '',
    actorId: undefined,
    sessionId: undefined,
    context: Object.freeze({}),
    metadata: Object.freeze({}),
    deadline: undefined,
  });
  const { onEvent } = options;
  const environment = {
    runContext: new RunContext({ invocation, signal: controller.signal }),
    emit: (type: string, data: unknown) => {
      onEvent?.(Object.freeze({ type, data }) as unknown as StreamEvent);
    },
    budget: new ToolCallBudget(options.maxToolCalls ?? 1_000),
    lock: new ToolLock(),
    tools: new Map(tools.map((tool) => [tool.name, tool])),
  };
  let session: CodeModeSession;
  try {
    const sandbox = await createSandboxFactory(
      sandboxChoice,
      runtime,
      limits,
      spareHosts === undefined ? {} : { spareHosts },
    );
    warnUnboundedMemory(options.engine, sandbox, limits.memoryBytes);
    const broker = new ToolBroker({ catalog, limits, callTool: (call) => runToolCall(call, environment) });
    session = await options.engine.open({
      broker,
      sandbox,
      limits,
      catalog,
      placement,
      observationWindowMs: options.observationWindowMs ?? defaultObservationWindowMs,
      prewarm: options.prewarm ?? true,
    });
  } catch (error) {
    // Nothing was started; the workspace root made above must not outlive the failed open.
    controller.abort();
    await release();
    throw error;
  }
  return {
    session,
    workspaceRoot,
    async close() {
      try {
        await session.close();
      } finally {
        controller.abort();
        await release();
      }
    },
  };
}

/** The entries left in a directory (program workspaces that were not removed). */
export async function leftoverEntries(directory: string): Promise<string[]> {
  return process
    .getBuiltinModule('node:fs/promises')
    .readdir(directory)
    .catch(() => []);
}
