import { GhostError } from '@ghost/core';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import {
  StreamableHTTPClientTransport,
  StreamableHTTPError,
} from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  type CallToolResult,
  ErrorCode,
  McpError,
  type Tool as McpTool,
  ToolListChangedNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { boundedFetch } from './bounded-fetch.js';
import { McpConnectionError, McpLimitError, McpServerClosedError, McpToolError } from './errors.js';
import type { ResolvedMcpOptions } from './mcp-options.js';
import { StdioProcessTransport } from './stdio-process-transport.js';

const clientInfo = { name: 'ghost', version: '0.1.0' };

interface Session {
  readonly client: Client;
  readonly transport: Transport;
  /** Set when an HTTP message went over the byte cap: the session was closed for that reason. */
  limitFailure?: McpLimitError;
}

/**
 * One connection to one MCP server: the SDK client over a bounded transport, the tool list read
 * within the limits, calls with cancellation, and list-change notices. An HTTP session the server
 * has forgotten (404) is reconnected once, transparently; a stdio server that exits is not
 * restarted, and calls then fail with `McpServerClosedError`.
 */
export class McpConnection {
  readonly #options: ResolvedMcpOptions;
  #session: Session | undefined;
  #reconnecting: Promise<Session> | undefined;
  #isClosed = false;
  readonly #listChangeListeners = new Set<() => void>();

  constructor(options: ResolvedMcpOptions) {
    this.#options = options;
  }

  /** The stdio watchdog's process id, when the server runs over stdio and has started. */
  get pid(): number | undefined {
    const transport = this.#session?.transport;
    return transport instanceof StdioProcessTransport ? transport.pid : undefined;
  }

  /** Starts the server (or reaches it) and completes the MCP handshake. */
  async connect(): Promise<void> {
    this.#session = await this.#open();
  }

  /** Called when the server says its tool list changed. */
  onListChange(listener: () => void): () => void {
    this.#listChangeListeners.add(listener);
    return () => this.#listChangeListeners.delete(listener);
  }

  async #open(): Promise<Session> {
    const { name, limits } = this.#options;
    let session: Session | undefined;
    const transport = this.#createTransport((failure) => {
      // Which request the oversized message answered is unknown, so the session is closed:
      // its calls in flight fail with this error, and the next call opens a new session.
      if (!session || session.limitFailure) return;
      session.limitFailure = failure;
      void session.client.close().catch(() => {});
    });
    const client = new Client(clientInfo, { capabilities: {} });
    // Transport errors also reach pending calls as rejections; nothing more to do with them here.
    client.onerror = () => {};
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      for (const listener of this.#listChangeListeners) listener();
    });
    try {
      await client.connect(transport, { timeout: limits.connectTimeoutMs });
    } catch (cause) {
      // Read before closing: the transport's own failure (an exit, a message over the cap) is the
      // reason, while the exit that our close() causes is not.
      const reason = closeReasonOf(transport) ?? cause;
      await transport.close().catch(() => {});
      throw new McpConnectionError(this.#connectFailure(reason), { cause: reason, server: name });
    }
    session = { client, transport };
    return session;
  }

  /** What a failed connect says: a handshake that took too long is not a wrong command. */
  #connectFailure(reason: unknown): string {
    const { name, limits } = this.#options;
    const check = this.#options.transport === 'stdio' ? 'command, args, env and cwd' : 'url and headers';
    if (isTimeout(reason)) {
      return `MCP server '${name}' did not complete the MCP handshake within ${limits.connectTimeoutMs} ms (limits.connectTimeoutMs). A server that is slow to start (one that npx or uvx downloads first, say) needs a higher limit; otherwise check the server's ${check}.`;
    }
    return `Could not connect to MCP server '${name}': ${formatError(reason)}. Check the server's ${check}.`;
  }

  #createTransport(onLimit: (failure: McpLimitError) => void): Transport {
    const options = this.#options;
    if (options.transport === 'stdio') {
      const { command, args = [], env = {}, cwd } = options.stdio;
      return new StdioProcessTransport({
        command,
        args,
        env,
        ...(cwd !== undefined ? { cwd } : {}),
        maxMessageBytes: options.limits.maxMessageBytes,
      });
    }
    return new StreamableHTTPClientTransport(options.url, {
      requestInit: { headers: options.headers },
      fetch: boundedFetch(options.limits.maxMessageBytes, onLimit),
    });
  }

  async #currentSession(): Promise<Session> {
    if (this.#isClosed) throw this.#closedError();
    if (this.#reconnecting) return this.#reconnecting;
    if (!this.#session) throw this.#closedError();
    if (this.#session.limitFailure) return this.#reconnect(this.#session);
    return this.#session;
  }

  /** Opens a new HTTP session after the server forgot the old one; callers share one attempt. */
  #reconnect(lost: Session): Promise<Session> {
    if (this.#session !== lost && this.#session) return Promise.resolve(this.#session);
    this.#reconnecting ??= (async () => {
      await lost.client.close().catch(() => {});
      try {
        const session = await this.#open();
        if (this.#isClosed) {
          await session.client.close().catch(() => {});
          throw this.#closedError();
        }
        this.#session = session;
        return session;
      } finally {
        this.#reconnecting = undefined;
      }
    })();
    return this.#reconnecting;
  }

  /**
   * Lists the server's tools, page by page, within `maxListPages` and `maxTools`; past either
   * it rejects with an `McpLimitError` rather than use a partial list.
   */
  async listTools(): Promise<McpTool[]> {
    const { name, limits } = this.#options;
    return this.#withSession('tools/list', async (client) => {
      const tools: McpTool[] = [];
      let cursor: string | undefined;
      for (let page = 1; ; page += 1) {
        if (page > limits.maxListPages) {
          throw new McpLimitError(
            `MCP server '${name}' kept paginating its tool list past ${limits.maxListPages} pages (limits.maxListPages).`,
          );
        }
        const result = await client.listTools(cursor === undefined ? {} : { cursor }, {
          timeout: limits.connectTimeoutMs,
        });
        tools.push(...result.tools);
        if (tools.length > limits.maxTools) {
          throw new McpLimitError(
            `MCP server '${name}' lists more than ${limits.maxTools} tools (limits.maxTools). Raise the limit if all of them are needed.`,
          );
        }
        if (result.nextCursor === undefined) return tools;
        cursor = result.nextCursor;
      }
    });
  }

  /**
   * Calls a tool. Aborting `signal` (the Ghost call's timeout, the run's cancellation) sends
   * `notifications/cancelled` to the server; the SDK checks `structuredContent` against the tool's
   * output schema. A server that closes mid-call gives an `McpServerClosedError`.
   */
  callTool(toolName: string, input: unknown, signal: AbortSignal): Promise<CallToolResult> {
    return this.#withSession(`tools/call ${toolName}`, async (client) => {
      const result = await client.callTool(
        { name: toolName, arguments: input as Record<string, unknown> },
        undefined,
        // Ghost's own timeout aborts the signal first; the SDK's is only a backstop.
        { signal, timeout: this.#options.timeoutMs + 5_000 },
      );
      return result as CallToolResult;
    });
  }

  async #withSession<Result>(what: string, operation: (client: Client) => Promise<Result>): Promise<Result> {
    let session = await this.#currentSession();
    for (let attempt = 0; ; attempt += 1) {
      try {
        return await operation(session.client);
      } catch (error) {
        if (attempt === 0 && isSessionLost(error) && !this.#isClosed) {
          session = await this.#reconnect(session);
          continue;
        }
        throw this.#translate(error, session, what);
      }
    }
  }

  #translate(error: unknown, session: Session, what: string): unknown {
    const { name } = this.#options;
    const closeReason = session.limitFailure ?? closeReasonOf(session.transport);
    if (GhostError.isInstance(error)) return error;
    if (closeReason && McpLimitError.isInstance(closeReason)) return closeReason;
    if (isTimeout(error)) {
      const limit = what === 'tools/list' ? 'limits.connectTimeoutMs' : 'timeoutMs';
      return new McpToolError(
        `MCP server '${name}' did not answer ${what} in time (${limit}); it may be overloaded or stuck.`,
        { cause: error, server: name },
      );
    }
    if (error instanceof McpError && error.code === ErrorCode.ConnectionClosed) {
      return new McpServerClosedError(
        `MCP server '${name}' closed the connection during ${what}${closeReason ? `: ${closeReason.message}` : ''}. Its tools are unavailable until it is connected again.`,
        { cause: error, server: name },
      );
    }
    if (error instanceof McpError) {
      return new McpToolError(`MCP server '${name}' answered ${what} with an error: ${error.message}`, {
        cause: error,
        server: name,
        mcpCode: error.code,
      });
    }
    if (closeReason) {
      return new McpServerClosedError(`MCP server '${name}' is not running: ${closeReason.message}.`, {
        cause: closeReason,
        server: name,
      });
    }
    return new McpToolError(`MCP server '${name}' failed during ${what}: ${formatError(error)}`, {
      cause: error,
      server: name,
    });
  }

  #closedError(): McpServerClosedError {
    const { name } = this.#options;
    return new McpServerClosedError(
      `MCP server '${name}' has been closed; connect to it again to use its tools.`,
      { server: name },
    );
  }

  /** Ends the session (an HTTP session is terminated on the server) and the stdio process. */
  async close(): Promise<void> {
    if (this.#isClosed) return;
    this.#isClosed = true;
    this.#listChangeListeners.clear();
    const session = this.#session ?? (await this.#reconnecting?.catch(() => undefined));
    this.#session = undefined;
    if (!session) return;
    if (session.transport instanceof StreamableHTTPClientTransport) {
      // Ending the session on the server is a courtesy: a server that does not answer soon
      // must not hold up close().
      await withTimeout(session.transport.terminateSession(), terminateTimeoutMs).catch(() => {});
    }
    await session.client.close();
    // The SDK's close does not wait for a stdio server to exit; ours does.
    await session.transport.close();
  }
}

const terminateTimeoutMs = 5_000;

/** `work`, or a rejection once `timeoutMs` has passed; the timer never outlives it. */
async function withTimeout<Result>(work: Promise<Result>, timeoutMs: number): Promise<Result> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`No answer within ${timeoutMs} ms.`)), timeoutMs);
  });
  try {
    return await Promise.race([work, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

function closeReasonOf(transport: Transport): Error | undefined {
  return transport instanceof StdioProcessTransport ? transport.closeReason : undefined;
}

/** Whether the SDK gave up waiting for an answer (its request timeout). */
function isTimeout(error: unknown): boolean {
  return error instanceof McpError && error.code === ErrorCode.RequestTimeout;
}

function isSessionLost(error: unknown): boolean {
  return error instanceof StreamableHTTPError && error.code === 404;
}

function formatError(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
