import { ToolSourceError } from './errors.js';
import type { RunContext } from './run-context.js';
import type { Tool } from './tool.js';
import type { OpenedToolSource, ToolSource } from './tool-source.js';

interface OpenSource {
  readonly source: ToolSource;
  readonly opened: OpenedToolSource;
}

/**
 * The tools of one run: the agent's plain tools and the tools of its sources, opened for the run.
 * When a source's tools change, the set is merged again and its listeners are told; a merge
 * that fails (two tools with one name) is kept as the error the run's next turn throws.
 */
export class RunTools {
  readonly #plain: readonly Tool[];
  readonly #sources: readonly OpenSource[];
  readonly #listeners = new Set<(tools: readonly Tool[]) => void>();
  #current: ReadonlyMap<string, Tool>;
  #mergeError: ToolSourceError | undefined;

  private constructor(plain: readonly Tool[], sources: readonly OpenSource[]) {
    this.#plain = plain;
    this.#sources = sources;
    this.#current = merge(plain, sources);
  }

  /**
   * Opens every source in parallel. When one fails, those that opened are closed again and
   * the error names the source; `register` receives each opened source's close, in order.
   */
  static async open(
    agentName: string,
    plain: readonly Tool[],
    sources: readonly ToolSource[],
    run: RunContext,
    register: (closer: () => Promise<void>) => void,
  ): Promise<RunTools> {
    const settled = await Promise.allSettled(sources.map((source) => source.open({ agentName, run })));
    const opened: OpenSource[] = [];
    let failure: ToolSourceError | undefined;
    for (const [index, result] of settled.entries()) {
      const source = sources[index] as ToolSource;
      if (result.status === 'fulfilled') {
        opened.push({ source, opened: result.value });
        register(() => result.value.close());
      } else if (failure === undefined) {
        const reason = result.reason as unknown;
        const message = reason instanceof Error ? reason.message : String(reason);
        failure = new ToolSourceError(
          `Agent '${agentName}' could not open its tool source '${source.name}': ${message}`,
          { cause: reason, source: source.name },
        );
      }
    }
    // The run's cleanup closes the sources that did open, including when this throws.
    if (failure) throw failure;
    const tools = new RunTools(plain, opened);
    for (const source of opened) {
      source.opened.onChange?.(() => tools.#refresh());
    }
    return tools;
  }

  /** The run's tools now, by name. Throws the merge error of the last change, if it failed. */
  get current(): ReadonlyMap<string, Tool> {
    if (this.#mergeError) throw this.#mergeError;
    return this.#current;
  }

  /** Calls `listener` with the new tools after a source changed them. */
  onChange(listener: (tools: readonly Tool[]) => void): void {
    this.#listeners.add(listener);
  }

  #refresh(): void {
    try {
      this.#current = merge(this.#plain, this.#sources);
      this.#mergeError = undefined;
    } catch (error) {
      this.#mergeError = error as ToolSourceError;
      return;
    }
    const tools = [...this.#current.values()];
    for (const listener of this.#listeners) listener(tools);
  }
}

function merge(plain: readonly Tool[], sources: readonly OpenSource[]): ReadonlyMap<string, Tool> {
  const byName = new Map<string, Tool>();
  const owner = new Map<string, string>();
  for (const tool of plain) {
    byName.set(tool.name, tool);
    owner.set(tool.name, 'the agent');
  }
  for (const { source, opened } of sources) {
    for (const tool of opened.tools) {
      if (tool?.kind !== 'tool') {
        throw new ToolSourceError(`Tool source '${source.name}' gave a tool not made with defineTool().`, {
          source: source.name,
        });
      }
      const earlier = owner.get(tool.name);
      if (earlier !== undefined) {
        throw new ToolSourceError(
          `Tool '${tool.name}' of tool source '${source.name}' has the name of a tool of ${earlier === 'the agent' ? 'the agent' : `tool source '${earlier}'`}; tool names must be unique, so rename one of them.`,
          { source: source.name, tool: tool.name },
        );
      }
      byName.set(tool.name, tool);
      owner.set(tool.name, source.name);
    }
  }
  return byName;
}
