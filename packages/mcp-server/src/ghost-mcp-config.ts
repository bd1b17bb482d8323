import { readFile } from 'node:fs/promises';
import { dirname, isAbsolute, resolve } from 'node:path';
import { type CodeModeLimits, type CodeModePlacement, defaultCodeModeLimits } from '@ghost/code-mode';
import { GhostMcpConfigError, type GhostMcpConfigErrorCode } from './ghost-mcp-config-error.js';

/** An MCP server `ghost-mcp` starts as a child process and talks to over stdio. */
export interface GhostMcpStdioServer {
  readonly command: string;
  readonly args: readonly string[];
  /**
   * Variables for the server, added to the few MCP clients conventionally pass (`PATH`, `HOME`,
   * `USER`, ...); nothing else of ghost-mcp's environment reaches it.
   */
  readonly env?: Readonly<Record<string, string>>;
  /** The child's working directory, resolved against the config file's directory. */
  readonly cwd?: string;
}

/** An MCP server `ghost-mcp` reaches over Streamable HTTP. */
export interface GhostMcpHttpServer {
  readonly url: string;
  /** Headers sent with every request, such as `Authorization`. */
  readonly headers?: Readonly<Record<string, string>>;
}

/** Where `ghost-mcp --http` listens, and its bounds; see `listenCodeModeMcpHttp` for each. */
export interface GhostMcpHttpSettings {
  readonly host?: string;
  readonly port?: number;
  /** Host names the `Host` and `Origin` headers may name. */
  readonly allowedHostNames?: readonly string[];
  /** Client sessions open at once. */
  readonly maxSessions?: number;
  /** Client sessions one client (a user of this machine, or an address) may hold at once. */
  readonly maxSessionsPerClient?: number;
  /** How long a request's headers may take to arrive, in milliseconds. */
  readonly headersTimeoutMs?: number;
  /** How long a connection may stay quiet while not waiting for an answer, in milliseconds. */
  readonly idleTimeoutMs?: number;
}

/** The settings of `http` that are whole numbers greater than 0. */
const httpCounts = ['maxSessions', 'maxSessionsPerClient', 'headersTimeoutMs', 'idleTimeoutMs'] as const;

/** A checked `ghost-mcp.json`. */
export interface GhostMcpConfig {
  /** The absolute path of the file it was read from. */
  readonly path: string;
  /** The MCP servers whose tools programs may call, by the name their tools are prefixed with. */
  readonly servers: Readonly<Record<string, GhostMcpStdioServer | GhostMcpHttpServer>>;
  /**
   * JavaScript modules (absolute paths) whose default export is a list of Ghost tools
   * (`defineTool` from `@ghost/core`): an application's own tools, served beside the servers'.
   */
  readonly toolModules: readonly string[];
  readonly engine?: string;
  readonly sandbox?: string;
  readonly placement?: CodeModePlacement;
  readonly limits?: Partial<CodeModeLimits>;
  /** How long exec and wait watch a program before answering `still_working`, in milliseconds. */
  readonly observationWindowMs?: number;
  readonly http: GhostMcpHttpSettings;
}

const topLevelKeys = [
  'servers',
  'toolModules',
  'engine',
  'sandbox',
  'placement',
  'limits',
  'observationWindowMs',
  'http',
];
const stdioServerKeys = ['command', 'args', 'env', 'cwd'];
const httpServerKeys = ['url', 'headers'];
const httpKeys = ['host', 'port', 'allowedHostNames', ...httpCounts];
const placements: readonly CodeModePlacement[] = ['process', 'session', 'thread'];
// A server's name prefixes its tools' names in programs, so it must be an identifier part.
const serverNamePattern = /^[A-Za-z0-9_-]{1,32}$/;

type JsonRecord = Record<string, unknown>;

function isRecord(value: unknown): value is JsonRecord {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function formatValue(value: unknown): string {
  if (Array.isArray(value)) return 'a list';
  if (value === null) return 'null';
  return typeof value === 'object' ? 'an object' : JSON.stringify(value);
}

class ConfigReader {
  readonly path: string;

  constructor(path: string) {
    this.path = path;
  }

  fail(
    message: string,
    code: GhostMcpConfigErrorCode = 'GHOST_MCP_CONFIG_INVALID',
    facts: { readonly key?: string; readonly server?: string } = {},
  ): never {
    throw new GhostMcpConfigError(`${this.path}: ${message}`, { code, path: this.path, ...facts });
  }

  checkKeys(record: JsonRecord, known: readonly string[], where: string): void {
    for (const key of Object.keys(record)) {
      if (!known.includes(key)) {
        this.fail(
          `${where} has no key '${key}'. Known keys: ${known.join(', ')}.`,
          'GHOST_MCP_CONFIG_KEY_UNKNOWN',
          { key },
        );
      }
    }
  }

  string(value: unknown, where: string, code?: GhostMcpConfigErrorCode): string {
    if (typeof value !== 'string' || value === '')
      this.fail(`${where} is a non-empty string, not ${formatValue(value)}.`, code);
    return value;
  }

  optionalString(value: unknown, where: string): string | undefined {
    return value === undefined ? undefined : this.string(value, where);
  }

  stringMap(value: unknown, where: string, code?: GhostMcpConfigErrorCode): Record<string, string> {
    if (!isRecord(value) || Object.values(value).some((entry) => typeof entry !== 'string')) {
      this.fail(`${where} is an object of strings, such as { "NAME": "value" }.`, code);
    }
    return { ...(value as Record<string, string>) };
  }

  stringList(value: unknown, where: string, code?: GhostMcpConfigErrorCode): string[] {
    if (!Array.isArray(value) || value.some((entry) => typeof entry !== 'string')) {
      this.fail(`${where} is a list of strings.`, code);
    }
    return [...(value as string[])];
  }

  server(name: string, value: unknown): GhostMcpStdioServer | GhostMcpHttpServer {
    const code = 'GHOST_MCP_CONFIG_SERVER_INVALID';
    const where = `servers.${name}`;
    if (!serverNamePattern.test(name)) {
      this.fail(
        `server name '${name}' must be 1 to 32 letters, digits, '_' or '-': it prefixes the server's tools in programs.`,
        code,
        { server: name },
      );
    }
    if (!isRecord(value)) {
      this.fail(
        `${where} is an object: { "command": "...", "args": [...] } or { "url": "https://..." }.`,
        code,
        {
          server: name,
        },
      );
    }
    const hasCommand = 'command' in value;
    const hasUrl = 'url' in value;
    if (hasCommand === hasUrl) {
      this.fail(
        `${where} needs either "command" (a server started over stdio) or "url" (a server reached over HTTP), ${hasCommand ? 'not both' : 'and has neither'}.`,
        code,
        { server: name },
      );
    }
    if (hasUrl) {
      this.checkKeys(value, httpServerKeys, where);
      const url = this.string(value.url, `${where}.url`, code);
      let parsed: URL;
      try {
        parsed = new URL(url);
      } catch {
        this.fail(`${where}.url ${JSON.stringify(url)} is not a URL.`, code, { server: name });
      }
      if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
        this.fail(`${where}.url must be an http: or https: URL, not ${parsed.protocol}.`, code, {
          server: name,
        });
      }
      return {
        url,
        ...(value.headers === undefined
          ? {}
          : { headers: this.stringMap(value.headers, `${where}.headers`, code) }),
      };
    }
    this.checkKeys(value, stdioServerKeys, where);
    const command = this.string(value.command, `${where}.command`, code);
    const cwd = this.optionalString(value.cwd, `${where}.cwd`);
    return {
      command,
      args: value.args === undefined ? [] : this.stringList(value.args, `${where}.args`, code),
      ...(value.env === undefined ? {} : { env: this.stringMap(value.env, `${where}.env`, code) }),
      ...(cwd === undefined ? {} : { cwd: resolve(dirname(this.path), cwd) }),
    };
  }

  limits(value: unknown): Partial<CodeModeLimits> {
    if (!isRecord(value)) this.fail('limits is an object such as { "wallSeconds": 900 }.');
    const known = Object.keys(defaultCodeModeLimits);
    this.checkKeys(value, known, 'limits');
    for (const [key, limit] of Object.entries(value)) {
      if (typeof limit !== 'number' || !Number.isFinite(limit) || limit <= 0) {
        this.fail(`limits.${key} is a number greater than 0, not ${formatValue(limit)}.`);
      }
    }
    return value as Partial<CodeModeLimits>;
  }

  http(value: unknown): GhostMcpHttpSettings {
    if (!isRecord(value)) this.fail('http is an object such as { "port": 3917 }.');
    this.checkKeys(value, httpKeys, 'http');
    const { port } = value;
    if (
      port !== undefined &&
      (!Number.isInteger(port) || (port as number) < 0 || (port as number) > 65_535)
    ) {
      this.fail(`http.port is a whole number from 0 to 65535, not ${formatValue(port)}.`);
    }
    const host = this.optionalString(value.host, 'http.host');
    const counts: Partial<Record<(typeof httpCounts)[number], number>> = {};
    for (const key of httpCounts) {
      const count = value[key];
      if (count === undefined) continue;
      if (!Number.isInteger(count) || (count as number) < 1) {
        this.fail(`http.${key} is a whole number greater than 0, not ${formatValue(count)}.`);
      }
      counts[key] = count as number;
    }
    return {
      ...(host === undefined ? {} : { host }),
      ...(port === undefined ? {} : { port: port as number }),
      ...(value.allowedHostNames === undefined
        ? {}
        : { allowedHostNames: this.stringList(value.allowedHostNames, 'http.allowedHostNames') }),
      ...counts,
    };
  }
}

/**
 * Checks the parsed JSON of a `ghost-mcp.json` read from `path` (relative paths in it are
 * resolved against the file's directory). Throws a {@link GhostMcpConfigError} that names the
 * file, the key and what to write instead.
 */
export function parseGhostMcpConfig(json: unknown, path: string): GhostMcpConfig {
  // Annotated so that calls to its never-returning fail() narrow types.
  const reader: ConfigReader = new ConfigReader(path);
  if (!isRecord(json))
    reader.fail(`the config is a JSON object such as { "servers": { ... } }, not ${formatValue(json)}.`);
  reader.checkKeys(json, topLevelKeys, 'The config');
  const servers: Record<string, GhostMcpStdioServer | GhostMcpHttpServer> = {};
  if (json.servers !== undefined) {
    if (!isRecord(json.servers)) {
      reader.fail(
        'servers is an object naming each MCP server: { "files": { "command": "...", "args": [...] } }.',
      );
    }
    for (const [name, entry] of Object.entries(json.servers)) servers[name] = reader.server(name, entry);
  }
  const toolModules =
    json.toolModules === undefined
      ? []
      : reader
          .stringList(json.toolModules, 'toolModules')
          .map((module) => (isAbsolute(module) ? module : resolve(dirname(path), module)));
  const engine = reader.optionalString(json.engine, 'engine');
  const sandbox = reader.optionalString(json.sandbox, 'sandbox');
  const { placement } = json;
  if (placement !== undefined && !placements.includes(placement as CodeModePlacement)) {
    reader.fail(`placement is "process", "session" or "thread", not ${formatValue(placement)}.`);
  }
  const window = json.observationWindowMs;
  if (window !== undefined && (typeof window !== 'number' || !Number.isFinite(window) || window <= 0)) {
    reader.fail(
      `observationWindowMs is a number of milliseconds greater than 0, not ${formatValue(window)}.`,
    );
  }
  return Object.freeze({
    path,
    servers,
    toolModules,
    ...(engine === undefined ? {} : { engine }),
    ...(sandbox === undefined ? {} : { sandbox }),
    ...(placement === undefined ? {} : { placement: placement as CodeModePlacement }),
    ...(json.limits === undefined ? {} : { limits: reader.limits(json.limits) }),
    ...(window === undefined ? {} : { observationWindowMs: window as number }),
    http: json.http === undefined ? {} : reader.http(json.http),
  });
}

/**
 * Reads and checks a `ghost-mcp.json`. A missing file, a file that is not JSON, an unknown key or
 * a malformed server entry throws a {@link GhostMcpConfigError} that says what to fix.
 *
 * @example
 * ```ts
 * const config = await loadGhostMcpConfig('ghost-mcp.json');
 * console.log(Object.keys(config.servers));
 * ```
 */
export async function loadGhostMcpConfig(path: string): Promise<GhostMcpConfig> {
  const absolute = resolve(path);
  let text: string;
  try {
    text = await readFile(absolute, 'utf8');
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    throw new GhostMcpConfigError(
      code === 'ENOENT'
        ? `No config file at ${absolute}. Create it, such as { "servers": { "files": { "command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "."] } } }, or pass --config <path>.`
        : `Cannot read the config file ${absolute}: ${(error as Error).message}.`,
      { code: 'GHOST_MCP_CONFIG_NOT_FOUND', path: absolute, cause: error },
    );
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new GhostMcpConfigError(
      `${absolute} is not valid JSON: ${(error as Error).message}. Fix the syntax (JSON has no comments or trailing commas).`,
      { code: 'GHOST_MCP_CONFIG_JSON_INVALID', path: absolute, cause: error },
    );
  }
  return parseGhostMcpConfig(json, absolute);
}
