import type { RunContext } from './run-context.js';
import type { Runtime } from './runtime.js';
import type { SandboxBackendV1 } from './sandbox.js';
import type { StreamEventDataMap } from './stream-event.js';
import type { Tool } from './tool.js';
import type { ToolCallOutcome } from './tool-call-runner.js';

/** Emits one of code mode's program events. */
export type EmitProgramEvent = <Type extends 'program_start' | 'program_stop'>(
  type: Type,
  data: StreamEventDataMap[Type],
) => void;

/**
 * The hook through which `@ghost/code-mode` plugs into an agent. Core knows only this shape, so
 * it never depends on code mode; applications write `codeMode({...})` and never implement it.
 */
export interface AgentCodeMode {
  readonly kind: 'code-mode';
  /**
   * Checks the settings against the agent's tools when the agent is defined (reserved or
   * colliding names, unknown `except` names) and throws a `ConfigurationError` for mistakes.
   */
  prepare(agent: {
    readonly agentName: string;
    readonly tools: readonly Tool[];
    /** True when the agent also has tool sources, whose tools are known only when a run starts. */
    readonly hasToolSources?: boolean;
  }): PreparedAgentCodeMode;
}

/** Code mode checked against one agent, ready to start once per run. */
export interface PreparedAgentCodeMode {
  /** Opens the run's code-mode session; called when a run of the agent starts. */
  start(context: AgentCodeModeStart): Promise<AgentCodeModeRun>;
}

/** A tool call a program makes, to run through the agent's pipeline. */
export interface BrokeredToolCall {
  readonly toolCallId: string;
  readonly toolName: string;
  readonly input: unknown;
  /** The id of the control operation (`exec`, `wait`) the program was observed under. */
  readonly parentToolCallId: string;
  /** Aborts the call when its program ends first. */
  readonly signal?: AbortSignal;
}

/** What code mode gets from the run it starts in. */
export interface AgentCodeModeStart {
  readonly agentName: string;
  readonly runtime: Runtime;
  readonly runContext: RunContext;
  /** The run's tools when it starts: the agent's plain tools and those of its tool sources. */
  readonly tools?: readonly Tool[];
  /**
   * Runs one of the agent's tools through the same pipeline as a direct call: validation,
   * authorization, the shared `maxToolCalls` budget, the exclusive lock, events and timeouts.
   */
  callTool(call: BrokeredToolCall): Promise<ToolCallOutcome>;
  /** Emits the run's `program_start` and `program_stop` events. */
  emitProgramEvent: EmitProgramEvent;
  /** Records the backend that contains this run's programs, for `run.sandbox`. */
  attachSandbox(sandbox: SandboxBackendV1): void;
}

/** What code mode gives one run. */
export interface AgentCodeModeRun {
  /** The tools the model sees: the `except` tools and the control tools. */
  readonly modelTools: readonly Tool[];
  /**
   * The control tools (`exec`, `wait`, `stop`) among `modelTools`: they skip the tool budget and
   * the lock, and their events stay out of the public stream.
   */
  readonly controlToolNames: ReadonlySet<string>;
  /** Added to the agent's instructions: how to write programs, and the tool declarations. */
  readonly instructions: string;
  /**
   * Called when a tool source changed the run's tools. `modelTools` and `instructions` are read
   * again at the next model turn; the next program gets the new catalog, while a program that
   * is running keeps the one it started with.
   */
  updateTools?(tools: readonly Tool[]): void;
  /** Ends the program and releases the session; the run calls it when it ends, however it ends. */
  close(): Promise<void>;
}
