import { ConfigurationError } from '@ghost/core';
import { isAgent, isAssembly, type Runnable, type StepResult, wholeNumberAtLeast } from './assembly.js';

/** What a graph's `when` and `input` functions see of the run so far. */
export interface GraphState {
  /** The input the graph was asked with. */
  readonly input: string;
  /** The latest result of every node that has completed. */
  readonly results: Readonly<Record<string, StepResult>>;
  /** How many node runs the graph has started (counted against `maxSteps`). */
  readonly steps: number;
}

/** An edge of a graph: after `from` completes, `to` runs when `when` says so (always, without it). */
export interface GraphEdge<Node extends string = string> {
  /** The node whose result decides. */
  readonly from: Node;
  /** The node that runs next. */
  readonly to: Node;
  /**
   * Whether to take this edge, from `from`'s result. When several edges of a node match, their
   * targets run in parallel (a fork).
   */
  readonly when?: (result: StepResult, state: GraphState) => boolean;
  /** The input `to` gets along this edge. Default: `from`'s response. */
  readonly input?: (result: StepResult, state: GraphState) => string;
  /** How `toMermaid()` labels the edge. Default: `when` for a conditional edge, none otherwise. */
  readonly label?: string;
}

/** Where a failed node's error goes instead of failing the run. */
export interface GraphErrorEdge<Node extends string = string> {
  /** The node whose failure this edge routes. */
  readonly from: Node;
  /** The node that runs with the error instead. */
  readonly to: Node;
  /** The input `to` gets. Default: `Node '<from>' failed: <the error's message>`. */
  readonly input?: (error: unknown, state: GraphState) => string;
}

/** Options of one node. */
export interface GraphNodeOptions {
  /** Stops the node's run after this many milliseconds (an `AssemblyStepTimeoutError`). */
  readonly timeoutMs?: number;
  /** How many times a failed node runs again before its error edge is taken (or the run fails). Default 0. */
  readonly retries?: number;
  /** The wait before each retry. Default 0. */
  readonly retryDelayMs?: number;
}

/** The options of {@link defineGraph}. */
export interface GraphDefinition<Node extends string = string> {
  /** A name for logs and events. */
  readonly name: string;
  /** The graph's nodes by name: agents or assemblies. */
  readonly nodes: Readonly<Record<Node, Runnable>>;
  /** The node that gets the graph's input. */
  readonly start: NoInfer<Node>;
  /** The edges, in the order they are tried. */
  readonly edges: readonly GraphEdge<NoInfer<Node>>[];
  /** At most one per node: where its error goes when it fails (after its retries). */
  readonly errorEdges?: readonly GraphErrorEdge<NoInfer<Node>>[];
  /**
   * The nodes that end the run when they complete; the first to complete gives the run's
   * response. Default: the nodes no edge leaves.
   */
  readonly finish?: readonly NoInfer<Node>[];
  /** The most node runs in one run, a cycle included. Default 20. */
  readonly maxSteps?: number;
  /** The most nodes running at once after a fork. Default 8. */
  readonly maxConcurrency?: number;
  /** Options per node: timeout and retries. */
  readonly nodeOptions?: Readonly<Partial<Record<NoInfer<Node>, GraphNodeOptions>>>;
}

/** A checked definition, indexed for running. */
export interface CompiledGraph {
  readonly name: string;
  readonly nodes: ReadonlyMap<string, Runnable>;
  readonly start: string;
  readonly edges: readonly GraphEdge[];
  readonly errorEdges: readonly GraphErrorEdge[];
  readonly edgesFrom: ReadonlyMap<string, readonly GraphEdge[]>;
  readonly errorEdgeFrom: ReadonlyMap<string, GraphErrorEdge>;
  readonly finish: ReadonlySet<string>;
  /** For each node with several incoming edges (a join): its sources, in the order their edges are defined. */
  readonly joinSources: ReadonlyMap<string, readonly string[]>;
  /** For each node: the nodes reachable from it in one or more steps, by edges or error edges. */
  readonly reachable: ReadonlyMap<string, ReadonlySet<string>>;
  readonly maxSteps: number;
  readonly maxConcurrency: number;
  readonly nodeOptions: ReadonlyMap<string, GraphNodeOptions>;
}

const definitionKeys = [
  'name',
  'nodes',
  'start',
  'edges',
  'errorEdges',
  'finish',
  'maxSteps',
  'maxConcurrency',
  'nodeOptions',
];
const edgeKeys = ['from', 'to', 'when', 'input', 'label'];
const errorEdgeKeys = ['from', 'to', 'input'];
const nodeOptionKeys = ['timeoutMs', 'retries', 'retryDelayMs'];

function invalid(message: string, option?: string): ConfigurationError {
  return new ConfigurationError(message, {
    code: 'CONFIGURATION_INVALID',
    ...(option !== undefined ? { option } : {}),
  });
}

function checkKeys(value: object, known: readonly string[], where: string): void {
  for (const key of Object.keys(value)) {
    if (!known.includes(key)) {
      throw new ConfigurationError(`${where} has no option '${key}'. Known options: ${known.join(', ')}.`, {
        code: 'OPTION_UNKNOWN',
        option: key,
        known,
      });
    }
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Checks a graph's definition, throwing a `ConfigurationError` that says what to fix. */
export function compileGraph(definition: GraphDefinition): CompiledGraph {
  const name = checkName(definition);
  const where = `Graph '${name}'`;
  checkKeys(definition, definitionKeys, where);
  const nodes = checkNodes(definition.nodes, where);
  const known = [...nodes.keys()];
  const graph: GraphCheck = { where, checkNode: (node, option) => checkNode(node, option, nodes, where) };
  const start = graph.checkNode(definition.start, 'start');
  const edges = checkEdges(definition.edges, graph);
  const { errorEdges, errorEdgeFrom } = checkErrorEdges(definition.errorEdges ?? [], graph);
  const edgesFrom = new Map<string, GraphEdge[]>();
  for (const edge of edges) edgesFrom.set(edge.from, [...(edgesFrom.get(edge.from) ?? []), edge]);
  const finish = checkFinish(definition.finish, known, edgesFrom, graph);
  const maxSteps = checkLimit(definition.maxSteps ?? 20, 'maxSteps', where);
  const maxConcurrency = checkLimit(definition.maxConcurrency ?? 8, 'maxConcurrency', where);
  const nodeOptions = checkNodeOptions(definition.nodeOptions ?? {}, graph);
  return {
    name,
    nodes,
    start,
    edges,
    errorEdges,
    edgesFrom,
    errorEdgeFrom,
    finish: new Set(finish),
    joinSources: joinSourcesOf([...edges, ...errorEdges]),
    reachable: reachableOf(known, [...edges, ...errorEdges]),
    maxSteps,
    maxConcurrency,
    nodeOptions,
  };
}

/** What the checks of one definition share once its nodes are known. */
interface GraphCheck {
  /** `Graph '<name>'`, the start of every message. */
  readonly where: string;
  /** Returns `node` when it names one of the graph's nodes; throws, naming `option`, otherwise. */
  checkNode(node: unknown, option: string): string;
}

function checkName(definition: GraphDefinition): string {
  if (!isObject(definition)) throw invalid('defineGraph() takes a definition object.');
  const { name } = definition;
  if (typeof name !== 'string' || name.trim() === '') {
    throw new ConfigurationError('A graph needs a non-empty name.', { code: 'AGENT_NAME_INVALID' });
  }
  return name;
}

function checkNodes(definitionNodes: GraphDefinition['nodes'], where: string): Map<string, Runnable> {
  if (!isObject(definitionNodes) || Object.keys(definitionNodes).length === 0) {
    throw invalid(
      `${where} needs nodes: an object of agents or assemblies by name, such as { research, write }.`,
      'nodes',
    );
  }
  const nodes = new Map<string, Runnable>();
  for (const [node, runnable] of Object.entries(definitionNodes)) {
    if (!isAgent(runnable) && !isAssembly(runnable)) {
      throw invalid(
        `${where}: node '${node}' is not an agent (defineAgent) or an assembly (defineWorkflow, defineSwarm, defineGraph).`,
        'nodes',
      );
    }
    nodes.set(node, runnable);
  }
  return nodes;
}

function checkNode(
  node: unknown,
  option: string,
  nodes: ReadonlyMap<string, Runnable>,
  where: string,
): string {
  if (typeof node !== 'string' || !nodes.has(node)) {
    throw invalid(
      `${where}: ${option} names node '${String(node)}', which is not one of its nodes (${[...nodes.keys()].join(', ')}).`,
      option,
    );
  }
  return node;
}

function checkEdges(definitionEdges: GraphDefinition['edges'], graph: GraphCheck): GraphEdge[] {
  const { where } = graph;
  if (!Array.isArray(definitionEdges))
    throw invalid(`${where} needs edges: an array of { from, to }.`, 'edges');
  return definitionEdges.map((edge, index) => {
    const at = `edges[${index}]`;
    if (!isObject(edge)) throw invalid(`${where}: ${at} is not an object { from, to }.`, 'edges');
    checkKeys(edge, edgeKeys, `${where}: ${at}`);
    graph.checkNode(edge.from, `${at}.from`);
    graph.checkNode(edge.to, `${at}.to`);
    for (const key of ['when', 'input'] as const) {
      if (edge[key] !== undefined && typeof edge[key] !== 'function') {
        throw invalid(`${where}: ${at}.${key} must be a function.`, key);
      }
    }
    if (edge.label !== undefined && typeof edge.label !== 'string') {
      throw invalid(`${where}: ${at}.label must be a string.`, 'label');
    }
    return Object.freeze({ ...edge }) as unknown as GraphEdge;
  });
}

function checkErrorEdges(
  definitionErrorEdges: NonNullable<GraphDefinition['errorEdges']>,
  graph: GraphCheck,
): { errorEdges: GraphErrorEdge[]; errorEdgeFrom: Map<string, GraphErrorEdge> } {
  const { where } = graph;
  if (!Array.isArray(definitionErrorEdges)) {
    throw invalid(`${where}: errorEdges must be an array of { from, to }.`, 'errorEdges');
  }
  const errorEdgeFrom = new Map<string, GraphErrorEdge>();
  const errorEdges = definitionErrorEdges.map((edge, index) => {
    const at = `errorEdges[${index}]`;
    if (!isObject(edge)) throw invalid(`${where}: ${at} is not an object { from, to }.`, 'errorEdges');
    checkKeys(edge, errorEdgeKeys, `${where}: ${at}`);
    const from = graph.checkNode(edge.from, `${at}.from`);
    graph.checkNode(edge.to, `${at}.to`);
    if (edge.input !== undefined && typeof edge.input !== 'function') {
      throw invalid(`${where}: ${at}.input must be a function.`, 'input');
    }
    if (errorEdgeFrom.has(from)) {
      throw invalid(
        `${where}: node '${from}' has two error edges; a failed node's error goes to one node.`,
        'errorEdges',
      );
    }
    const frozen = Object.freeze({ ...edge }) as unknown as GraphErrorEdge;
    errorEdgeFrom.set(from, frozen);
    return frozen;
  });
  return { errorEdges, errorEdgeFrom };
}

/** The nodes that end a run: those named in `finish`, else those no edge leaves. */
function checkFinish(
  definitionFinish: GraphDefinition['finish'],
  known: readonly string[],
  edgesFrom: ReadonlyMap<string, readonly GraphEdge[]>,
  graph: GraphCheck,
): string[] {
  const { where } = graph;
  let finish: string[];
  if (definitionFinish === undefined) {
    finish = known.filter((node) => !edgesFrom.has(node));
  } else {
    if (!Array.isArray(definitionFinish))
      throw invalid(`${where}: finish must be an array of node names.`, 'finish');
    finish = definitionFinish.map((node, index) => graph.checkNode(node, `finish[${index}]`));
  }
  if (finish.length === 0) {
    throw invalid(
      `${where} has no finish node: every node has an edge leaving it. Name the nodes that end the run in finish.`,
      'finish',
    );
  }
  return finish;
}

/** `maxSteps` or `maxConcurrency`: a whole number of at least 1. */
function checkLimit(value: number, option: 'maxSteps' | 'maxConcurrency', where: string): number {
  if (!wholeNumberAtLeast(value, 1)) {
    throw invalid(`${where} has ${option} = ${String(value)}; use a whole number of at least 1.`, option);
  }
  return value;
}

function checkNodeOptions(definitionNodeOptions: unknown, graph: GraphCheck): Map<string, GraphNodeOptions> {
  const { where } = graph;
  const nodeOptions = new Map<string, GraphNodeOptions>();
  if (!isObject(definitionNodeOptions)) {
    throw invalid(`${where}: nodeOptions must be an object by node name.`, 'nodeOptions');
  }
  for (const [node, options] of Object.entries(definitionNodeOptions)) {
    graph.checkNode(node, 'nodeOptions');
    if (!isObject(options)) throw invalid(`${where}: nodeOptions.${node} must be an object.`, 'nodeOptions');
    checkKeys(options, nodeOptionKeys, `${where}: nodeOptions.${node}`);
    const minimums = { timeoutMs: 1, retries: 0, retryDelayMs: 0 } as const;
    for (const [key, minimum] of Object.entries(minimums)) {
      const value = options[key];
      if (value !== undefined && !wholeNumberAtLeast(value, minimum)) {
        throw invalid(
          `${where}: nodeOptions.${node}.${key} = ${String(value)}; use a whole number of at least ${minimum}.`,
          key,
        );
      }
    }
    nodeOptions.set(node, Object.freeze({ ...options }) as GraphNodeOptions);
  }
  return nodeOptions;
}

function joinSourcesOf(edges: readonly { from: string; to: string }[]): Map<string, string[]> {
  const incoming = new Map<string, string[]>();
  for (const { from, to } of edges) incoming.set(to, [...(incoming.get(to) ?? []), from]);
  const joins = new Map<string, string[]>();
  for (const [node, sources] of incoming) {
    const unique = [...new Set(sources)];
    if (unique.length > 1) joins.set(node, unique);
  }
  return joins;
}

function reachableOf(
  nodes: readonly string[],
  edges: readonly { from: string; to: string }[],
): Map<string, Set<string>> {
  const reachable = new Map<string, Set<string>>();
  for (const node of nodes) {
    const seen = new Set<string>();
    const pending = [node];
    while (pending.length > 0) {
      const current = pending.pop() as string;
      for (const edge of edges) {
        if (edge.from === current && !seen.has(edge.to)) {
          seen.add(edge.to);
          pending.push(edge.to);
        }
      }
    }
    reachable.set(node, seen);
  }
  return reachable;
}
