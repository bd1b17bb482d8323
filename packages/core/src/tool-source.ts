import type { RunContext } from './run-context.js';
import type { Tool } from './tool.js';

/** What a tool source gets when a run opens it. */
export interface ToolSourceOpenContext {
  /** The agent whose run is starting. */
  readonly agentName: string;
  /** The run: its invocation, its signal (aborts on cancellation and at the deadline). */
  readonly run: RunContext;
}

/** A tool source opened for one run: its tools now, and how it tells the run they changed. */
export interface OpenedToolSource {
  /** The tools the source offers now. The run reads it again after each change notice. */
  readonly tools: readonly Tool[];
  /**
   * Subscribes to changes of `tools` (a server's tool list changed); returns the unsubscribe.
   * The run gives the model the new tools from its next turn; in code mode the next program gets
   * a rebuilt catalog, while a program already running keeps the catalog it started with.
   */
  onChange?(listener: () => void): () => void;
  /** Releases what `open` acquired for this run. The run calls it when it ends, however it ends. */
  close(): Promise<void>;
}

/**
 * Tools that are known only when a run starts, or that change while it runs, such as the tools of
 * an MCP server (`mcpTools()` and `mcpServer()` from `@ghost/mcp-client`). An agent's `tools` list takes
 * sources beside plain tools: each run opens every source (in parallel; a failure fails the run),
 * merges their tools with the plain ones (a name used twice is an error) and closes the sources
 * when it ends.
 *
 * @example
 * ```ts
 * const clock: ToolSource = {
 *   kind: 'tool-source',
 *   name: 'clock',
 *   async open() {
 *     return { tools: [currentTimeTool], close: async () => {} };
 *   },
 * };
 * const agent = defineAgent({ name: 'assistant', model, tools: [lookup, clock] });
 * ```
 */
export interface ToolSource {
  /** Marks the object as a tool source among an agent's tools. */
  readonly kind: 'tool-source';
  /** Names the source in errors, such as the MCP server's name. */
  readonly name: string;
  /** Opens the source for one run. Rejecting fails the run with a `ToolSourceError`. */
  open(context: ToolSourceOpenContext): Promise<OpenedToolSource>;
}

/** True when `value` is a {@link ToolSource} (an object of kind `'tool-source'` with `open`). */
export function isToolSource(value: unknown): value is ToolSource {
  return (
    typeof value === 'object' &&
    value !== null &&
    (value as { kind?: unknown }).kind === 'tool-source' &&
    typeof (value as { open?: unknown }).open === 'function'
  );
}
