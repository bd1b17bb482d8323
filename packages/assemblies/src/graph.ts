import { CancelledError, ConfigurationError } from '@ghost/core';
import {
  type Assembly,
  type AssemblyScope,
  assemblyEntry,
  registerAssembly,
  runStep,
  type StepResult,
} from './assembly.js';
import { AssemblyLimitError, AssemblyRoutingError } from './assembly-errors.js';
import {
  type CompiledGraph,
  compileGraph,
  type GraphDefinition,
  type GraphState,
} from './graph-definition.js';
import { graphToMermaid } from './graph-mermaid.js';

/** A graph made by {@link defineGraph}. */
export interface Graph extends Assembly {
  /** Always `graph`. */
  readonly kind: 'graph';
  /** The graph as a Mermaid `flowchart TD`: conditional edges labelled, error edges dashed, finish nodes double-bordered. */
  toMermaid(): string;
}

/**
 * Defines a graph: agents (or assemblies) as nodes, and edges that say which runs next. Asked like
 * an agent, it returns one `Run` over every node it ran.
 *
 * - An edge is taken when its `when(result, state)` is true (always, without `when`); its target
 *   gets `input(result, state)`, or the source's response.
 * - When several edges of a node match, their targets run in parallel (`assembly_fork`), at most
 *   `maxConcurrency` at once.
 * - A node with edges from several nodes (a join) waits until every branch started towards it has
 *   arrived or can no longer arrive, then runs once (`assembly_join`). With one arrival its input
 *   is that arrival's text; with several, each arrival as a section `## <source node>` followed by
 *   its text, in the order the edges are defined, separated by a blank line.
 * - When a node fails (after its retries), its error edge, if any, routes the error onward
 *   instead of failing the run.
 * - The run ends when a `finish` node completes and none of its edges matches (its response is
 *   the run's; nodes still running are stopped): a finish node's conditional edge can send the
 *   work back, as a review asking for a revision. A node that is not a finish node and has no matching edge fails the run with an
 *   `AssemblyRoutingError`; more than `maxSteps` node runs fail it with an `AssemblyLimitError`.
 *
 * @example
 * ```ts
 * const graph = defineGraph({
 *   name: 'article',
 *   nodes: { research, write, review },
 *   start: 'research',
 *   edges: [
 *     { from: 'research', to: 'write' },
 *     { from: 'write', to: 'review' },
 *     { from: 'review', to: 'write', when: (result) => result.response.includes('REVISE') },
 *   ],
 *   finish: ['review'],
 * });
 * const run = await graph.ask('Lisbon');
 * ```
 */
export function defineGraph<Node extends string>(definition: GraphDefinition<Node>): Graph {
  const graph = compileGraph(definition as GraphDefinition);
  const perform = (scope: AssemblyScope, input: string): Promise<StepResult> =>
    new GraphExecution(graph, scope, input).run();
  const mermaid = graphToMermaid(graph);
  const entry: Graph = Object.freeze({
    ...assemblyEntry('graph', graph.name, perform),
    toMermaid: () => mermaid,
  });
  registerAssembly(entry, perform);
  return entry;
}

/** How a started node run ended; a branch's promise never rejects, so the loop handles every ending. */
type NodeOutcome =
  | { readonly id: number; readonly node: string; readonly ok: true; readonly result: StepResult }
  | { readonly id: number; readonly node: string; readonly ok: false; readonly error: unknown };

/** One run of a graph: its ready queue, running nodes and waiting joins. */
class GraphExecution {
  readonly #graph: CompiledGraph;
  readonly #scope: AssemblyScope;
  readonly #input: string;
  /** Stops the branches still running when the graph ends early (a finish node, a failure). */
  readonly #stop = new AbortController();
  readonly #branchScope: AssemblyScope;
  // Bounded: every entry counts against maxSteps before it is queued.
  readonly #ready: { readonly node: string; readonly input: string }[] = [];
  /** The node runs started and not yet handled, by id. */
  readonly #running = new Map<number, { readonly node: string; readonly ending: Promise<NodeOutcome> }>();
  /** Joins waiting for branches: their arrivals' text by source node. */
  readonly #waiting = new Map<string, Map<string, string>>();
  readonly #results: Record<string, StepResult> = {};
  #steps = 0;
  #nextId = 1;

  constructor(graph: CompiledGraph, scope: AssemblyScope, input: string) {
    this.#graph = graph;
    this.#scope = scope;
    this.#input = input;
    const signal = scope.signal ? AbortSignal.any([scope.signal, this.#stop.signal]) : this.#stop.signal;
    this.#branchScope = { ...scope, signal };
  }

  async run(): Promise<StepResult> {
    try {
      this.#enqueue(this.#graph.start, this.#input);
      for (;;) {
        this.#startReady();
        if (this.#running.size === 0) {
          // Joins that wait on one another (a cycle) and nothing else to run: the first goes.
          const first = this.#waiting.keys().next();
          if (first.done) {
            throw new AssemblyRoutingError(
              `Graph '${this.#graph.name}' stopped before reaching a finish node (${[...this.#graph.finish].join(', ')}).`,
            );
          }
          this.#fireJoin(first.value);
          continue;
        }
        const outcome = await Promise.race([...this.#running.values()].map((entry) => entry.ending));
        this.#running.delete(outcome.id);
        const finished = this.#settle(outcome);
        if (finished !== undefined) return finished;
        this.#releaseJoins();
      }
    } finally {
      if (this.#running.size > 0) {
        this.#stop.abort(new CancelledError(`Graph '${this.#graph.name}' ended; this branch was stopped.`));
        await Promise.all([...this.#running.values()].map((entry) => entry.ending));
      }
    }
  }

  /** Handles a node's ending; returns the run's result when a finish node completed. */
  #settle(outcome: NodeOutcome): StepResult | undefined {
    const { node } = outcome;
    const { name } = this.#graph;
    const { execution } = this.#scope;
    const emit: typeof execution.emit = (type, data) => execution.emit(type, data);
    if (!outcome.ok) {
      const errorEdge = this.#graph.errorEdgeFrom.get(node);
      // A stop (the run's cancellation, an outer timeout) is not the node's failure to route.
      if (errorEdge === undefined || this.#stopped()) throw outcome.error;
      emit('assembly_transition', { assemblyName: name, from: node, to: errorEdge.to, kind: 'error_edge' });
      const text = errorEdge.input
        ? checkedInput(errorEdge.input(outcome.error, this.#state()), name, node, errorEdge.to)
        : `Node '${node}' failed: ${outcome.error instanceof Error ? outcome.error.message : String(outcome.error)}`;
      this.#deliver(node, errorEdge.to, text);
      return undefined;
    }
    const { result } = outcome;
    this.#results[node] = result;
    const state = this.#state();
    const taken = new Map<string, string>();
    for (const edge of this.#graph.edgesFrom.get(node) ?? []) {
      // The first matching edge to a node wins: one node run per target.
      if (taken.has(edge.to) || (edge.when !== undefined && !edge.when(result, state))) continue;
      taken.set(
        edge.to,
        edge.input ? checkedInput(edge.input(result, state), name, node, edge.to) : result.response,
      );
    }
    // A finish node ends the run unless one of its edges matched (a review sending a draft back).
    if (taken.size === 0 && this.#graph.finish.has(node)) return result;
    if (taken.size === 0) {
      throw new AssemblyRoutingError(
        `Graph '${name}': no edge from node '${node}' matched its result, and '${node}' is not a finish node. Add an edge without 'when' from '${node}' as a fallback, or add '${node}' to finish.`,
      );
    }
    if (taken.size > 1) emit('assembly_fork', { assemblyName: name, from: node, to: [...taken.keys()] });
    for (const [to, text] of taken) {
      emit('assembly_transition', { assemblyName: name, from: node, to, kind: 'edge' });
      this.#deliver(node, to, text);
    }
    return undefined;
  }

  #deliver(from: string, to: string, text: string): void {
    if (!this.#graph.joinSources.has(to)) {
      this.#enqueue(to, text);
      return;
    }
    const arrivals = this.#waiting.get(to) ?? new Map<string, string>();
    arrivals.set(from, text);
    this.#waiting.set(to, arrivals);
  }

  /** Runs every waiting join that no running, queued or waiting node can still reach. */
  #releaseJoins(): void {
    for (let released = true; released; ) {
      released = false;
      for (const join of this.#waiting.keys()) {
        if (!this.#canStillArrive(join)) {
          this.#fireJoin(join);
          released = true;
          break;
        }
      }
    }
  }

  #canStillArrive(join: string): boolean {
    const reaches = (node: string) => this.#graph.reachable.get(node)?.has(join) === true;
    return (
      [...this.#running.values()].some((entry) => reaches(entry.node)) ||
      this.#ready.some((entry) => reaches(entry.node)) ||
      [...this.#waiting.keys()].some((other) => other !== join && reaches(other))
    );
  }

  #fireJoin(join: string): void {
    const arrivals = this.#waiting.get(join) ?? new Map<string, string>();
    this.#waiting.delete(join);
    const sources = (this.#graph.joinSources.get(join) ?? []).filter((source) => arrivals.has(source));
    this.#scope.execution.emit('assembly_join', {
      assemblyName: this.#graph.name,
      node: join,
      from: sources,
    });
    const input =
      sources.length === 1
        ? (arrivals.get(sources[0] as string) as string)
        : sources.map((source) => `## ${source}\n\n${arrivals.get(source)}`).join('\n\n');
    this.#enqueue(join, input);
  }

  #enqueue(node: string, input: string): void {
    this.#steps += 1;
    if (this.#steps > this.#graph.maxSteps) {
      throw new AssemblyLimitError(
        `Graph '${this.#graph.name}' would run node '${node}' as its step ${this.#steps}, past its maxSteps of ${this.#graph.maxSteps}. Check the cycle's 'when' conditions, or raise maxSteps.`,
        { limit: 'maxSteps', value: this.#graph.maxSteps },
      );
    }
    this.#ready.push({ node, input });
  }

  #startReady(): void {
    while (this.#ready.length > 0 && this.#running.size < this.#graph.maxConcurrency) {
      const { node, input } = this.#ready.shift() as { node: string; input: string };
      const id = this.#nextId;
      this.#nextId += 1;
      const options = this.#graph.nodeOptions.get(node) ?? {};
      const ending = runStep(this.#branchScope, {
        step: node,
        runnable: this.#graph.nodes.get(node) as NonNullable<ReturnType<CompiledGraph['nodes']['get']>>,
        input,
        ...options,
      }).then(
        (result): NodeOutcome => ({ id, node, ok: true, result }),
        (error: unknown): NodeOutcome => ({ id, node, ok: false, error }),
      );
      this.#running.set(id, { node, ending });
    }
  }

  #stopped(): boolean {
    return (
      this.#scope.execution.signal.aborted ||
      this.#stop.signal.aborted ||
      this.#scope.signal?.aborted === true
    );
  }

  #state(): GraphState {
    return Object.freeze({
      input: this.#input,
      results: Object.freeze({ ...this.#results }),
      steps: this.#steps,
    });
  }
}

function checkedInput(value: unknown, graph: string, from: string, to: string): string {
  if (typeof value !== 'string') {
    throw new ConfigurationError(
      `Graph '${graph}': the input function of the edge from '${from}' to '${to}' returned ${typeof value}; it must return a string.`,
      { code: 'CONFIGURATION_INVALID', option: 'input' },
    );
  }
  return value;
}
