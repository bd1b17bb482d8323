import { McpConfigurationError } from './errors.js';

/** Bounds on what one MCP server may send. Every one is configurable. */
export interface McpLimits {
  /** Tools one server may list. Default 128. More is an `McpLimitError`, never a silent cut. */
  readonly maxTools: number;
  /** Pages of `tools/list` read before giving up on a server that keeps paginating. Default 16. */
  readonly maxListPages: number;
  /** The largest single message the server may send, in bytes. Default 8 MiB. */
  readonly maxMessageBytes: number;
  /**
   * How long the MCP handshake may take, the server's start included, and then each `tools/list`
   * request. Default 30,000 ms. Past it, connecting fails with an `McpConnectionError` that names
   * this limit.
   */
  readonly connectTimeoutMs: number;
}

/** The default {@link McpLimits}. */
export const defaultMcpLimits: McpLimits = Object.freeze({
  maxTools: 128,
  maxListPages: 16,
  maxMessageBytes: 8 * 1024 * 1024,
  connectTimeoutMs: 30_000,
});

/** Options every MCP server takes, whatever its transport. */
export interface McpCommonOptions {
  /** Names the server in tool names and errors: 1–32 letters, digits, `_` or `-`. */
  readonly name: string;
  /**
   * Put before each of the server's tool names, so two servers' tools never collide. Default
   * `<name>_` (server `files`, tool `read` → `files_read`); `''` keeps the server's names.
   */
  readonly toolPrefix?: string;
  /** How long one tool call may take before it is cancelled on the server. Default 60,000 ms. */
  readonly timeoutMs?: number;
  /** Bounds on what the server may send; the rest keep their defaults. */
  readonly limits?: Partial<McpLimits>;
}

/**
 * A server started as a child process and spoken to over its stdin and stdout. It gets exactly
 * the environment in `env` (nothing of this process's environment, so no secret leaks by
 * default), runs in its own process group (and, on Linux where this process may make one, its
 * own cgroup) and ends, with everything it started, when the connection is closed or this
 * process exits.
 */
export interface McpStdioOptions extends McpCommonOptions {
  /** The program to run, such as `process.execPath` or `uvx`. Looked up on `env.PATH` when given. */
  readonly command: string;
  /** The arguments given to `command`. */
  readonly args?: readonly string[];
  /** The server's whole environment, such as `{ PATH: process.env.PATH ?? '', API_TOKEN: token }`. */
  readonly env?: Readonly<Record<string, string>>;
  /** The server's working directory. Default: this process's. */
  readonly cwd?: string;
}

/** A server reached over Streamable HTTP. */
export interface McpHttpOptions extends McpCommonOptions {
  /** The server's MCP endpoint, such as `https://example.com/mcp`. */
  readonly url: string | URL;
  /** Headers sent with every request, such as `{ Authorization: 'Bearer …' }`. */
  readonly headers?: Readonly<Record<string, string>>;
}

/** The options of `mcpTools()` and `mcpServer()`: a stdio server or a Streamable HTTP one. */
export type McpToolsOptions = McpStdioOptions | McpHttpOptions;

/** Options checked and completed with their defaults. */
export type ResolvedMcpOptions = (
  | { readonly transport: 'stdio'; readonly stdio: McpStdioOptions }
  | { readonly transport: 'http'; readonly url: URL; readonly headers: Readonly<Record<string, string>> }
) & {
  readonly name: string;
  readonly toolPrefix: string;
  readonly timeoutMs: number;
  readonly limits: McpLimits;
};

const commonKeys = ['name', 'toolPrefix', 'timeoutMs', 'limits'];
const stdioKeys = new Set([...commonKeys, 'command', 'args', 'env', 'cwd']);
const httpKeys = new Set([...commonKeys, 'url', 'headers']);
const serverNamePattern = /^[A-Za-z0-9_-]{1,32}$/;

function fail(message: string, option?: string): never {
  throw new McpConfigurationError(message, option === undefined ? {} : { option });
}

function isStringRecord(value: unknown): value is Record<string, string> {
  return (
    typeof value === 'object' &&
    value !== null &&
    !Array.isArray(value) &&
    Object.values(value).every((entry) => typeof entry === 'string')
  );
}

function resolveLimits(where: string, limits: unknown): McpLimits {
  if (limits === undefined) return defaultMcpLimits;
  if (typeof limits !== 'object' || limits === null) fail(`${where}: limits is an object.`, 'limits');
  for (const [key, value] of Object.entries(limits)) {
    if (!(key in defaultMcpLimits)) {
      fail(`${where} has no limit '${key}'. Known: ${Object.keys(defaultMcpLimits).join(', ')}.`, key);
    }
    if (!Number.isInteger(value) || (value as number) < 1) {
      fail(`${where}: limits.${key} is a whole number of at least 1, not ${String(value)}.`, key);
    }
  }
  return Object.freeze({ ...defaultMcpLimits, ...limits });
}

/** Checks `mcpTools()` / `mcpServer()` options; mistakes throw an `McpConfigurationError`. */
export function resolveMcpOptions(options: McpToolsOptions, where: string): ResolvedMcpOptions {
  if (typeof options !== 'object' || options === null) fail(`${where} takes an options object.`);
  const { name } = options;
  if (typeof name !== 'string' || !serverNamePattern.test(name)) {
    fail(
      `${where}: name ${JSON.stringify(name)} is invalid: use 1 to 32 letters, digits, '_' or '-'.`,
      'name',
    );
  }
  const isStdio = 'command' in options;
  if (isStdio === 'url' in options) {
    fail(`${where} ('${name}') needs either command (a stdio server) or url (Streamable HTTP), not both.`);
  }
  const known = isStdio ? stdioKeys : httpKeys;
  for (const key of Object.keys(options)) {
    if (!known.has(key))
      fail(`${where} ('${name}') has no option '${key}'. Known: ${[...known].join(', ')}.`, key);
  }
  const toolPrefix = options.toolPrefix ?? `${name}_`;
  if (typeof toolPrefix !== 'string' || !/^[A-Za-z0-9_-]{0,32}$/.test(toolPrefix)) {
    fail(`${where} ('${name}'): toolPrefix is up to 32 letters, digits, '_' or '-'.`, 'toolPrefix');
  }
  const timeoutMs = options.timeoutMs ?? 60_000;
  if (!Number.isFinite(timeoutMs) || timeoutMs <= 0) {
    fail(`${where} ('${name}'): timeoutMs is a positive number of milliseconds.`, 'timeoutMs');
  }
  const common = {
    name,
    toolPrefix,
    timeoutMs,
    limits: resolveLimits(`${where} ('${name}')`, options.limits),
  };
  if (isStdio) {
    const stdio = options as McpStdioOptions;
    if (typeof stdio.command !== 'string' || stdio.command === '') {
      fail(`${where} ('${name}'): command is the program to run, such as process.execPath.`, 'command');
    }
    if (
      stdio.args !== undefined &&
      (!Array.isArray(stdio.args) || stdio.args.some((arg) => typeof arg !== 'string'))
    ) {
      fail(`${where} ('${name}'): args is a list of strings.`, 'args');
    }
    if (stdio.env !== undefined && !isStringRecord(stdio.env)) {
      fail(
        `${where} ('${name}'): env is an object of string values, such as { PATH: process.env.PATH ?? '' }.`,
        'env',
      );
    }
    if (stdio.cwd !== undefined && typeof stdio.cwd !== 'string')
      fail(`${where} ('${name}'): cwd is a path.`, 'cwd');
    return Object.freeze({ ...common, transport: 'stdio' as const, stdio });
  }
  const http = options as McpHttpOptions;
  let url: URL;
  try {
    url = new URL(http.url);
  } catch {
    fail(`${where} ('${name}'): url ${JSON.stringify(String(http.url))} is not a URL.`, 'url');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    fail(`${where} ('${name}'): url must be http: or https:, not ${url.protocol}.`, 'url');
  }
  if (http.headers !== undefined && !isStringRecord(http.headers)) {
    fail(`${where} ('${name}'): headers is an object of string values.`, 'headers');
  }
  return Object.freeze({ ...common, transport: 'http' as const, url, headers: { ...http.headers } });
}
