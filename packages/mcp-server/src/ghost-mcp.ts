import type { Readable, Writable } from 'node:stream';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { prepareCodeModeMcp } from './code-mode-mcp.js';
import { listenCodeModeMcpHttp } from './code-mode-mcp-http.js';
import { openConfigServerTools } from './config-server-tools.js';
import type { GhostMcpArguments } from './ghost-mcp-arguments.js';
import { loadGhostMcpConfig } from './ghost-mcp-config.js';
import { GhostMcpConfigError } from './ghost-mcp-config-error.js';
import { importToolModules } from './tool-modules.js';

/** The streams `ghost-mcp` talks through; the process's own by default. */
export interface GhostMcpStreams {
  readonly stdin: Readable;
  readonly stdout: Writable;
  readonly stderr: Writable;
}

/** A started `ghost-mcp`. */
export interface RunningGhostMcp {
  /** Where it listens, with `--http`. */
  readonly url: URL | undefined;
  /**
   * Settles when it has stopped and cleaned up: over stdio once the client closes standard input,
   * over HTTP once {@link RunningGhostMcp.stop} was called. Rejects when cleanup failed.
   */
  readonly stopped: Promise<void>;
  /** Stops serving, ends every program and disconnects from the config's MCP servers. */
  stop(): Promise<void>;
}

/**
 * Starts `ghost-mcp` as its flags and config file say: the config's tools (its MCP servers' and
 * its tool modules') behind code mode's `exec`, `wait` and `stop`, over stdio or Streamable HTTP.
 * Configuration mistakes reject with a `GhostMcpConfigError` before anything is served.
 */
export async function startGhostMcp(
  args: GhostMcpArguments,
  streams: GhostMcpStreams = process,
): Promise<RunningGhostMcp> {
  const config = await loadGhostMcpConfig(args.configPath);
  const moduleTools = await importToolModules(config.toolModules);
  const serverTools = await openConfigServerTools(config);
  try {
    const tools = [...moduleTools, ...serverTools.tools];
    if (tools.length === 0) {
      throw new GhostMcpConfigError(
        `${config.path} names no servers and no toolModules, so programs would have no tools to call. Add an MCP server under "servers".`,
        { code: 'GHOST_MCP_CONFIG_INVALID', path: config.path },
      );
    }
    const codeMode = await prepareCodeModeMcp({
      tools,
      name: 'ghost-mcp',
      ...(config.engine === undefined ? {} : { engine: config.engine }),
      ...(config.sandbox === undefined ? {} : { sandbox: config.sandbox }),
      ...(config.placement === undefined ? {} : { placement: config.placement }),
      ...(config.limits === undefined ? {} : { limits: config.limits }),
      ...(config.observationWindowMs === undefined
        ? {}
        : { observationWindowMs: config.observationWindowMs }),
      onError: (error) => streams.stderr.write(`ghost-mcp: ${(error as Error).message}\n`),
    });
    // Every client session shares the prepared code mode's runtime: it closes after the sessions.
    const closeAfter = (sessionsClosed: Promise<void>) =>
      sessionsClosed.finally(() => codeMode.close()).finally(() => serverTools.close());
    if (args.isHttp) {
      const { host: configHost, port: configPort, ...bounds } = config.http;
      const host = args.host ?? configHost;
      const port = args.port ?? configPort;
      const http = await listenCodeModeMcpHttp(codeMode, {
        ...bounds,
        ...(host === undefined ? {} : { host }),
        ...(port === undefined ? {} : { port }),
      }).catch(async (error: unknown) => {
        await codeMode.close();
        throw error;
      });
      streams.stderr.write(
        `ghost-mcp: code mode (${codeMode.engineName} in ${codeMode.sandboxName}) over ${tools.length} tools at ${http.url}\n`,
      );
      const { stopped, stop } = stopOnce(() => closeAfter(http.close()));
      return { url: http.url, stopped, stop };
    }
    const server = codeMode.createServer();
    await server
      .connect(new StdioServerTransport(streams.stdin, streams.stdout))
      .catch(async (error: unknown) => {
        await codeMode.close();
        throw error;
      });
    const { stopped, stop } = stopOnce(() => closeAfter(server.close()));
    // The client ends the session by closing our standard input (the MCP stdio transport's rule).
    const onEnd = () => {
      stop().catch(() => {}); // reported through `stopped`, which the caller awaits
    };
    streams.stdin.once('end', onEnd);
    streams.stdin.once('close', onEnd);
    server.closed.then(onEnd, onEnd);
    return { url: undefined, stopped, stop };
  } catch (error) {
    await serverTools.close();
    throw error;
  }
}

/** One stop for all callers: `stop()` starts `close` once and returns `stopped`, which settles with it. */
function stopOnce(close: () => Promise<void>): { stopped: Promise<void>; stop: () => Promise<void> } {
  let settle: { resolve: () => void; reject: (error: unknown) => void } | undefined;
  const stopped = new Promise<void>((resolve, reject) => {
    settle = { resolve, reject };
  });
  let isStarted = false;
  const stop = () => {
    if (!isStarted) {
      isStarted = true;
      close().then(settle?.resolve, settle?.reject);
    }
    return stopped;
  };
  return { stopped, stop };
}
