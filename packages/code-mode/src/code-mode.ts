import type { Runtime, Tool } from '@ghost/core';
import type { AgentCodeMode, AgentCodeModeStart, PreparedAgentCodeMode } from '@ghost/core/tool-calls';
import { controlToolNames, createControlTools } from './control-tools.js';
import { type CodeModePlacement, type EngineV1, isEngineV1 } from './engine.js';
import { warnUnboundedMemory } from './engine-capability.js';
import { requireEngineMemoryFloor } from './engine-memory-floor.js';
import { CodeModeConfigurationError } from './errors.js';
import { type CodeModeLimits, checkCodeModeLimits, resolveCodeModeLimits } from './limits.js';
import { RefreshingSession } from './parent/refreshing-session.js';
import {
  checkSpareHosts,
  createSandboxFactory,
  type SandboxChoice,
  sandboxName,
} from './parent/sandbox-factory.js';
import { requireContainablePlacement } from './parent/thread-placement.js';
import { ToolBroker } from './tool-broker.js';
import { ToolCatalog } from './tool-catalog.js';

const placements: readonly CodeModePlacement[] = ['process', 'session', 'thread'];

/** The options of {@link codeMode}; the same keys work as the runtime's `codeMode` defaults. */
export interface CodeModeOptions {
  /** The engine that runs programs: a registered name or an engine object. Default `'quickjs'`. */
  readonly engine?: string | EngineV1;
  /**
   * The sandbox that contains them. Default `'native'` (bubblewrap on Linux, seatbelt on macOS),
   * which fails closed where it is not available. `'unrestricted'` runs programs with no
   * containment and must be named explicitly.
   */
  readonly sandbox?: SandboxChoice;
  /**
   * `'process'` (default): a fresh host process per program. `'session'`: one sandboxed host
   * process reused for the session's programs while they complete, each in a fresh guest.
   * `'thread'`: a worker pool, with `'unrestricted'` only. See {@link CodeModePlacement}.
   */
  readonly placement?: CodeModePlacement;
  /** Limits to change; the rest keep their defaults. Merged key by key with the runtime's. */
  readonly limits?: Partial<CodeModeLimits>;
  /**
   * Tools that stay model-facing instead of moving into the program catalog, by name. Tools with
   * `needsApproval` stay model-facing too, unless `programApprovals` is true.
   */
  readonly except?: readonly string[];
  /**
   * Where tools that need a person's approval (`defineTool({ needsApproval })`) go. `false`
   * (default): they stay model-facing, as if listed in `except`, so the decision is a step of its
   * own. `true`: they go into the program catalog like any other tool, and a program's call waits
   * for the decision (`exec` and `wait` answer `still_working` meanwhile).
   */
  readonly programApprovals?: boolean;
  /** How long exec and wait watch a program before answering `still_working`. Default 60,000 ms. */
  readonly observationWindowMs?: number;
  /** Start the next engine host before a program needs it. Default true. */
  readonly prewarm?: boolean;
  /**
   * How many engine hosts the runtime keeps started ahead, at most, for the sessions that would
   * start the same host (same engine, sandbox, placement, limits and tools). Spares are shared by
   * sessions, sized by recent demand, and retire when idle; a spare, once taken, serves that
   * session only. Default 2; 0 starts no host ahead. `runtime.close()` ends them.
   */
  readonly spareHosts?: number;
}

const optionNames: readonly (keyof CodeModeOptions)[] = [
  'engine',
  'sandbox',
  'placement',
  'limits',
  'except',
  'programApprovals',
  'observationWindowMs',
  'prewarm',
  'spareHosts',
];

/** The default observation window of exec and wait: one minute. */
export const defaultObservationWindowMs = 60_000;

function checkOptions(options: unknown, where: string): CodeModeOptions {
  if (options === undefined) return {};
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    throw new CodeModeConfigurationError(`${where} takes an object of code mode options.`);
  }
  const record = options as Record<string, unknown>;
  for (const key of Object.keys(record)) {
    if (!(optionNames as readonly string[]).includes(key)) {
      throw new CodeModeConfigurationError(
        `${where} has no option '${key}'. Known options: ${optionNames.join(', ')}.`,
        { code: 'CODE_MODE_OPTION_UNKNOWN', option: key },
      );
    }
  }
  checkCodeModeLimits(record.limits, where);
  if (record.placement !== undefined && !placements.includes(record.placement as CodeModePlacement)) {
    throw new CodeModeConfigurationError(
      `${where}: placement is 'process', 'session' or 'thread', not ${JSON.stringify(record.placement)}.`,
    );
  }
  if (
    record.except !== undefined &&
    (!Array.isArray(record.except) || record.except.some((name) => typeof name !== 'string'))
  ) {
    throw new CodeModeConfigurationError(
      `${where}: except is a list of tool names, such as ['confirm_order'].`,
    );
  }
  const window = record.observationWindowMs;
  if (window !== undefined && (typeof window !== 'number' || !Number.isFinite(window) || window <= 0)) {
    throw new CodeModeConfigurationError(
      `${where}: observationWindowMs is a number of milliseconds greater than 0.`,
    );
  }
  if (record.programApprovals !== undefined && typeof record.programApprovals !== 'boolean') {
    throw new CodeModeConfigurationError(`${where}: programApprovals is true or false.`);
  }
  if (record.prewarm !== undefined && typeof record.prewarm !== 'boolean') {
    throw new CodeModeConfigurationError(`${where}: prewarm is true or false.`);
  }
  checkSpareHosts(record.spareHosts, where);
  for (const key of ['engine', 'sandbox'] as const) {
    const value = record[key];
    if (value !== undefined && typeof value !== 'string' && (typeof value !== 'object' || value === null)) {
      throw new CodeModeConfigurationError(`${where}: ${key} is a registered name or a plugin object.`);
    }
  }
  return record as CodeModeOptions;
}

/** The agent's options over the runtime's, key by key; limits merged key by key too. */
function mergeOptions(runtimeDefaults: CodeModeOptions, agent: CodeModeOptions): CodeModeOptions {
  return {
    ...runtimeDefaults,
    ...agent,
    limits: { ...runtimeDefaults.limits, ...agent.limits },
  };
}

interface SplitTools {
  readonly modelFacing: Tool[];
  readonly catalog: ToolCatalog;
}

/**
 * Reports a tool of the run that the program catalog renamed or left out: a tool source's names
 * (an MCP server's, with `toolPrefix: ''`) are not the application's to choose, and may change
 * while the run goes on, so they never fail it. A process warning, which Node prints to stderr.
 */
function warnNameConflict(warning: string): void {
  process.emitWarning(warning, 'GhostWarning');
}

/** Whether a tool's calls may need a person's approval: such tools stay model-facing by default. */
function mayNeedApproval(tool: Tool): boolean {
  return tool.needsApproval !== undefined && tool.needsApproval !== false;
}

function splitTools(
  tools: readonly Tool[],
  except: readonly string[],
  where: string,
  hasToolSources = false,
  onNameConflict?: (warning: string) => void,
  programApprovals = false,
): SplitTools {
  const names = new Set(tools.map((tool) => tool.name));
  for (const name of except) {
    // A tool source's tools are known at run start, when the check runs again with them.
    if (!names.has(name) && !hasToolSources) {
      throw new CodeModeConfigurationError(
        `${where}: except names '${name}', which is not one of the agent's tools (${[...names].join(', ') || 'none'}).`,
        { code: 'CODE_MODE_EXCEPT_UNKNOWN', tool: name },
      );
    }
    if (controlToolNames.has(name)) {
      throw new CodeModeConfigurationError(
        `${where}: a model-facing tool cannot be named '${name}': exec, wait and stop are code mode's controls. Rename the tool.`,
        { code: 'CODE_MODE_TOOL_NAME_RESERVED', tool: name },
      );
    }
  }
  const kept = new Set(except);
  if (!programApprovals) {
    for (const tool of tools) {
      if (!mayNeedApproval(tool) || kept.has(tool.name)) continue;
      if (controlToolNames.has(tool.name)) {
        throw new CodeModeConfigurationError(
          `${where}: tool '${tool.name}' needs approval, so it stays model-facing, but exec, wait and stop are code mode's controls. Rename the tool.`,
          { code: 'CODE_MODE_TOOL_NAME_RESERVED', tool: tool.name },
        );
      }
      kept.add(tool.name);
    }
  }
  const modelFacing = tools.filter((tool) => kept.has(tool.name));
  const brokered = tools.filter((tool) => !kept.has(tool.name));
  return {
    modelFacing,
    catalog: ToolCatalog.fromTools(brokered, where, onNameConflict ? { onNameConflict } : {}),
  };
}

/**
 * The engine code mode runs programs with: `choice` itself when it is an engine object, else the
 * engine registered under that name in `runtime`'s registry. `codeMode()` resolves its `engine`
 * option this way; use it to resolve the same option in an integration of your own.
 *
 * @throws CodeModeConfigurationError when the engine does not implement the code-mode engine
 * contract (one made with `defineEngine()` or `defineHostEngine()` does).
 *
 * @example
 * ```ts
 * import { resolveEngine } from '@ghost/code-mode';
 *
 * const engine = await resolveEngine(options.engine ?? 'quickjs', runtime);
 * ```
 */
export async function resolveEngine(choice: string | EngineV1, runtime: Runtime): Promise<EngineV1> {
  const engine = typeof choice === 'string' ? await runtime.registry.engine(choice) : choice;
  if (!isEngineV1(engine)) {
    throw new CodeModeConfigurationError(
      `Engine '${engine.name}' does not implement the code-mode engine contract (language, runtimePaths, placements, instructions, open). Make it with defineEngine() from @ghost/code-mode.`,
    );
  }
  return engine;
}

/**
 * Turns on code mode for an agent: its tools move into a program catalog, and the model gets
 * `exec`, `wait` and `stop` to run JavaScript programs that call them. Every brokered call goes
 * through the agent's own tool pipeline and counts toward its `maxToolCalls`. Mistakes in the
 * options, or tool names that cannot be program identifiers, throw when the agent is defined.
 *
 * @example
 * ```ts
 * const research = defineAgent({
 *   name: 'research',
 *   model,
 *   tools: [helpCenterLookup, confirmOrder],
 *   codeMode: codeMode({ sandbox: 'native', except: ['confirm_order'], limits: { wallSeconds: 900 } }),
 * });
 * ```
 */
export function codeMode(options: CodeModeOptions = {}): AgentCodeMode {
  const agentOptions = Object.freeze(checkOptions(options, 'codeMode()'));
  // Known now when both are named here; otherwise checked at start, with the runtime's defaults.
  if (agentOptions.placement !== undefined && agentOptions.sandbox !== undefined) {
    requireContainablePlacement(agentOptions.placement, sandboxName(agentOptions.sandbox), 'codeMode()');
  }
  return Object.freeze({
    kind: 'code-mode' as const,
    prepare({
      agentName,
      tools,
      hasToolSources = false,
    }: {
      agentName: string;
      tools: readonly Tool[];
      hasToolSources?: boolean;
    }): PreparedAgentCodeMode {
      const where = `Agent '${agentName}' code mode`;
      // Checked now, so a bad name fails at definition; rebuilt at start with the runtime's defaults.
      splitTools(
        tools,
        agentOptions.except ?? [],
        where,
        hasToolSources,
        undefined,
        agentOptions.programApprovals === true,
      );
      return { start: (context) => startCodeMode(context, agentOptions, context.tools ?? tools, where) };
    },
  });
}

async function startCodeMode(
  context: AgentCodeModeStart,
  agentOptions: CodeModeOptions,
  tools: readonly Tool[],
  where: string,
) {
  const { runtime } = context;
  const runtimeOptions = checkOptions(runtime.codeMode, 'createRuntime({ codeMode })');
  const settings = mergeOptions(runtimeOptions, agentOptions);
  const limits = resolveCodeModeLimits(settings.limits ?? {});
  const placement = settings.placement ?? 'process';
  const sandboxChoice = settings.sandbox ?? 'native';
  requireContainablePlacement(placement, sandboxName(sandboxChoice), where);
  const except = settings.except ?? [];
  const programApprovals = settings.programApprovals === true;
  // The agent's own tools were checked when it was defined; the rest come from tool sources.
  const initial = splitTools(tools, except, where, false, warnNameConflict, programApprovals);
  // The sandbox is detected while the engine loads; an engine problem is still reported first.
  const [engineFound, sandboxFound] = await Promise.allSettled([
    resolveEngine(settings.engine ?? 'quickjs', runtime),
    createSandboxFactory(
      sandboxChoice,
      runtime,
      limits,
      settings.spareHosts === undefined ? {} : { spareHosts: settings.spareHosts },
    ),
  ]);
  if (engineFound.status === 'rejected') throw engineFound.reason;
  const engine = engineFound.value;
  if (!engine.placements.includes(placement)) {
    throw new CodeModeConfigurationError(
      `${where}: engine '${engine.name}' supports placement ${engine.placements.join(' or ')}, not '${placement}'.`,
    );
  }
  requireEngineMemoryFloor(engine, limits.memoryBytes, where);
  if (sandboxFound.status === 'rejected') throw sandboxFound.reason;
  const sandbox = sandboxFound.value;
  context.attachSandbox(sandbox.backend);
  warnUnboundedMemory(engine, sandbox, limits.memoryBytes);
  const observationWindowMs = settings.observationWindowMs ?? defaultObservationWindowMs;
  const instructionsOf = (catalog: ToolCatalog) =>
    engine.instructions({
      catalog,
      limits,
      sandbox: { name: sandbox.name, capabilities: sandbox.capabilities },
    });
  // Each catalog gets its own broker, and a session whose hosts are set up with that catalog.
  const openSession = async (catalog: ToolCatalog, programs: number) =>
    await engine.open({
      broker: new ToolBroker({ catalog, callTool: context.callTool, limits }),
      sandbox,
      limits: { ...limits, programs },
      catalog,
      placement,
      observationWindowMs,
      prewarm: settings.prewarm ?? true,
    });
  const session = new RefreshingSession(await openSession(initial.catalog, limits.programs), limits.programs);
  const controls = createControlTools(session, observationWindowMs, {
    emit: context.emitProgramEvent,
    engine: engine.name,
    sandbox: sandbox.name,
  });
  let modelFacing = initial.modelFacing;
  let instructions = instructionsOf(initial.catalog);
  let refreshError: unknown;
  return {
    get modelTools() {
      // A change the catalog cannot take (an except name that became a control) fails the next turn.
      if (refreshError !== undefined) throw refreshError;
      return [...modelFacing, ...controls];
    },
    controlToolNames,
    get instructions() {
      return instructions;
    },
    updateTools(next: readonly Tool[]) {
      try {
        const split = splitTools(next, except, where, false, warnNameConflict, programApprovals);
        modelFacing = split.modelFacing;
        instructions = instructionsOf(split.catalog);
        session.replace((programs) => openSession(split.catalog, programs));
        refreshError = undefined;
      } catch (error) {
        refreshError = error;
      }
    },
    close: () => session.close(),
  };
}
