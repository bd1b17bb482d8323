import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  CodeModeConfigurationError,
  type CodeModeLimits,
  type CodeModePlacement,
  defaultCodeModeLimits,
  type EngineV1,
  openCodeModeSession,
  resolveEngine,
  type SandboxChoice,
} from '@ghost/code-mode';
import { createSandboxFactory, ToolCatalog } from '@ghost/code-mode/engine';
import { createRuntime, type Runtime, type SandboxBackendV1, type Tool } from '@ghost/core';
import { CodeModeMcpServer } from './code-mode-mcp-server.js';
import { importFromPackage } from './import-from-package.js';

/** The options of {@link prepareCodeModeMcp} and {@link createCodeModeMcpServer}. */
export interface CodeModeMcpOptions {
  /** The tools programs may call. The MCP client never sees them directly, only through `exec`. */
  readonly tools: readonly Tool[];
  /** The engine that runs programs: a registered name or an engine object. Default `'quickjs'`. */
  readonly engine?: string | EngineV1;
  /**
   * The sandbox that contains them. Default `'native'` (bubblewrap on Linux, seatbelt on macOS),
   * which fails closed with a `SandboxUnavailableError` where it cannot contain programs.
   * `'unrestricted'` runs programs with no containment and must be named explicitly.
   */
  readonly sandbox?: SandboxChoice;
  /** Where programs run; see `CodeModePlacement` in `@ghost/code-mode`. Default `'process'`. */
  readonly placement?: CodeModePlacement;
  /**
   * Limits to change; the rest keep code mode's defaults, except `programs`, which is
   * {@link codeModeMcpDefaultPrograms} here because one MCP client session outlives many tasks.
   */
  readonly limits?: Partial<CodeModeLimits>;
  /** How many tool calls all programs of one client session may make together. Default 1,000,000. */
  readonly maxToolCalls?: number;
  /** How long exec and wait watch a program before answering `still_working`. Default 60,000 ms. */
  readonly observationWindowMs?: number;
  /** Start the next engine host before a program needs it. Default true. */
  readonly prewarm?: boolean;
  /**
   * Resolves engine and sandbox names, and holds the spare engine hosts every client session
   * shares. Default: a runtime of the prepared code mode's own that finds the built-in packages
   * among this package's dependencies, then in the current directory, closed by
   * {@link PreparedCodeModeMcp.close}. A runtime you pass stays yours to close.
   */
  readonly runtime?: Runtime;
  /** The name this server gives MCP clients. Default `'ghost-code-mode'`. */
  readonly name?: string;
  /** The version this server gives MCP clients. Default `'0.0.0'`. */
  readonly version?: string;
  /**
   * Receives what cannot be reported to a client: a session that failed to clean up after its
   * client went away. Default: written to standard error.
   */
  readonly onError?: (error: unknown) => void;
}

/**
 * Programs one MCP client session may start. Code mode's default (16) fits one agent run; an MCP
 * client such as a desktop assistant keeps its session for hours, across many tasks.
 */
export const codeModeMcpDefaultPrograms = 10_000;

const defaultMaxToolCalls = 1_000_000;

/** Code mode resolved once (engine, sandbox, catalog, instructions), serving any number of client sessions. */
export interface PreparedCodeModeMcp {
  /** The engine's name, such as `quickjs`. */
  readonly engineName: string;
  /** The sandbox's name, such as `bwrap` or `unrestricted`. */
  readonly sandboxName: string;
  /** What the model is told: how to write a program, what is enforced, and the tool declarations. */
  readonly instructions: string;
  /**
   * A new MCP server for one client session, with its own code-mode session opened on first use.
   * Every server of this prepared code mode shares its runtime, so N client sessions share one
   * pool of spare engine hosts rather than keeping N.
   */
  createServer(): CodeModeMcpServer;
  /**
   * Closes the runtime this prepared code mode made (its spare engine hosts) and removes its
   * workspace root; a runtime passed in `runtime` is left open. Close the servers first. Rejects
   * with a `CleanupError` when a host could not be released.
   */
  close(): Promise<void>;
}

/** What a {@link CodeModeMcpServer} needs to open its code-mode session. */
export interface CodeModeMcpSettings {
  readonly tools: readonly Tool[];
  readonly engine: EngineV1;
  readonly sandbox: SandboxBackendV1;
  readonly placement: CodeModePlacement;
  readonly limits: Partial<CodeModeLimits>;
  readonly maxToolCalls: number;
  readonly observationWindowMs: number | undefined;
  readonly prewarm: boolean;
  readonly instructions: string;
  readonly name: string;
  readonly version: string;
  readonly onError: (error: unknown) => void;
  /** The runtime every client session's code-mode session opens on, so they share one spare-host pool. */
  readonly runtime: Runtime;
}

const optionNames: readonly (keyof CodeModeMcpOptions)[] = [
  'tools',
  'engine',
  'sandbox',
  'placement',
  'limits',
  'maxToolCalls',
  'observationWindowMs',
  'prewarm',
  'runtime',
  'name',
  'version',
  'onError',
];

function checkOptions(options: CodeModeMcpOptions, where: string): void {
  if (typeof options !== 'object' || options === null) {
    throw new CodeModeConfigurationError(`${where} takes an object such as { tools: [lookup] }.`);
  }
  for (const key of Object.keys(options)) {
    if (!(optionNames as readonly string[]).includes(key)) {
      throw new CodeModeConfigurationError(
        `${where} has no option '${key}'. Known options: ${optionNames.join(', ')}.`,
        { code: 'CODE_MODE_OPTION_UNKNOWN', option: key },
      );
    }
  }
  if (!Array.isArray(options.tools)) {
    throw new CodeModeConfigurationError(`${where}: tools is a list of Ghost tools made with defineTool().`);
  }
  const { maxToolCalls } = options;
  if (maxToolCalls !== undefined && (!Number.isInteger(maxToolCalls) || maxToolCalls <= 0)) {
    throw new CodeModeConfigurationError(`${where}: maxToolCalls is a whole number greater than 0.`);
  }
}

/**
 * Resolves code mode for an MCP server once: the engine, the sandbox (failing closed where it
 * cannot contain programs), the tool catalog and the instructions. Every mistake in the options
 * throws here, before any client connects. Each {@link PreparedCodeModeMcp.createServer} then
 * serves one client session.
 *
 * @example
 * ```ts
 * const codeMode = await prepareCodeModeMcp({ tools: [lookup] });
 * const server = codeMode.createServer();
 * await server.connect(new StdioServerTransport());
 * ```
 */
export async function prepareCodeModeMcp(options: CodeModeMcpOptions): Promise<PreparedCodeModeMcp> {
  const { settings, engineName, sandboxName, release } = await resolveCodeModeMcp(options);
  let closing: Promise<void> | undefined;
  return Object.freeze({
    engineName,
    sandboxName,
    instructions: settings.instructions,
    createServer: () => new CodeModeMcpServer(settings),
    close: () => {
      closing ??= release();
      return closing;
    },
  });
}

/** Code mode resolved for an MCP server, with what releases the runtime it made (if it made one). */
interface ResolvedCodeModeMcp {
  readonly settings: CodeModeMcpSettings;
  readonly engineName: string;
  readonly sandboxName: string;
  readonly release: () => Promise<void>;
}

async function resolveCodeModeMcp(options: CodeModeMcpOptions): Promise<ResolvedCodeModeMcp> {
  const where = 'createCodeModeMcpServer()';
  checkOptions(options, where);
  if (options.runtime !== undefined) return prepareOnRuntime(options, where, options.runtime, async () => {});
  // A runtime of our own gets a workspace root of our own, so closing it leaves nothing behind.
  const workspaceRoot = await mkdtemp(join(tmpdir(), 'ghost-mcp-'));
  const runtime = createRuntime({ importModule: importFromPackage, workspaceRoot });
  const release = async (): Promise<void> => {
    try {
      await runtime.close();
    } finally {
      await rm(workspaceRoot, { recursive: true, force: true });
    }
  };
  try {
    return await prepareOnRuntime(options, where, runtime, release);
  } catch (error) {
    await release();
    throw error;
  }
}

async function prepareOnRuntime(
  options: CodeModeMcpOptions,
  where: string,
  runtime: Runtime,
  release: () => Promise<void>,
): Promise<ResolvedCodeModeMcp> {
  const engine = await resolveEngine(options.engine ?? 'quickjs', runtime);
  const placement = options.placement ?? 'process';
  const limits = { programs: codeModeMcpDefaultPrograms, ...options.limits };
  const sandbox = await createSandboxFactory(options.sandbox ?? 'native', runtime, {
    ...defaultCodeModeLimits,
    ...limits,
  });
  // A trial session with nothing started checks the limits, the placement and the tool names
  // exactly as every client's session will, so a mistake fails now and not at a client's first exec.
  const trial = await openCodeModeSession({
    engine,
    tools: options.tools,
    sandbox: sandbox.backend,
    placement,
    limits,
    prewarm: false,
    runtime,
  });
  await trial.close();
  const catalog = ToolCatalog.fromTools(options.tools, where);
  const instructions = engine.instructions({
    catalog,
    limits: { ...defaultCodeModeLimits, ...limits },
    sandbox: { name: sandbox.name, capabilities: sandbox.capabilities },
  });
  const settings: CodeModeMcpSettings = Object.freeze({
    tools: [...options.tools],
    engine,
    sandbox: sandbox.backend,
    placement,
    limits,
    maxToolCalls: options.maxToolCalls ?? defaultMaxToolCalls,
    observationWindowMs: options.observationWindowMs,
    prewarm: options.prewarm ?? true,
    instructions,
    name: options.name ?? 'ghost-code-mode',
    version: options.version ?? '0.0.0',
    onError: options.onError ?? reportToStandardError,
    runtime,
  });
  return { settings, engineName: engine.name, sandboxName: sandbox.name, release };
}

function reportToStandardError(error: unknown): void {
  // Never standard output: over stdio that is the protocol's channel.
  process.stderr.write(`ghost-mcp: ${error instanceof Error ? error.message : String(error)}\n`);
}

/**
 * Creates an MCP server for one client session whose tools are code mode's `exec`, `wait` and
 * `stop`; `exec`'s description carries the instructions and the TypeScript declarations of
 * `tools`. Connect it to a transport (`StdioServerTransport`, or one
 * `StreamableHTTPServerTransport` per session); to serve several HTTP sessions, use
 * {@link prepareCodeModeMcp} once and `createServer()` per session, or `listenCodeModeMcpHttp`.
 *
 * @example
 * ```ts
 * import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
 *
 * const server = await createCodeModeMcpServer({ tools: [lookup], limits: { wallSeconds: 900 } });
 * await server.connect(new StdioServerTransport());
 * // later: await server.close(), which also ends every program and removes its workspace
 * ```
 */
export async function createCodeModeMcpServer(options: CodeModeMcpOptions): Promise<CodeModeMcpServer> {
  const { settings, release } = await resolveCodeModeMcp(options);
  // The only server on this runtime: closing the server closes the runtime made for it.
  return new CodeModeMcpServer(settings, release);
}
