import {
  type CodeModeSession,
  CodeModeStateError,
  type OpenedCodeModeSession,
  openCodeModeSession,
  type ProgramResult,
} from '@ghost/code-mode';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import type { CodeModeMcpSettings } from './code-mode-mcp.js';
import { controlErrorContent, programResultContent } from './program-result-content.js';

const statusGuide =
  'The result is { status, output, value?, error? }. still_working means the program is still running: call wait to keep watching it, or stop when you no longer need it. completed, error and terminated are final: there is nothing left to wait for or stop.';

const programResultShape = {
  status: z.enum(['still_working', 'completed', 'error', 'terminated']),
  output: z.string().describe('Output since the previous exec or wait: text() and console.*'),
  value: z.unknown().optional().describe("The program's completion value, or what it passed to exit()"),
  error: z.string().optional().describe('Why the program failed, when status is error'),
};

/** Where an MCP request's cancellation and id reach the control operation. */
interface ControlRequest {
  readonly signal: AbortSignal;
  readonly requestId: string | number;
}

/**
 * One MCP client session's server: an `McpServer` whose tools are code mode's `exec`, `wait` and
 * `stop`. Its code-mode session opens on the first control call and closes when the client
 * session ends (the transport closes) or {@link CodeModeMcpServer.close} is called, ending every
 * program, host process and workspace it started. Made by `createCodeModeMcpServer()` or
 * `prepareCodeModeMcp().createServer()`.
 */
export class CodeModeMcpServer extends McpServer {
  readonly #settings: CodeModeMcpSettings;
  readonly #releaseRuntime: (() => Promise<void>) | undefined;
  #opening: Promise<OpenedCodeModeSession> | undefined;
  #closing: Promise<void> | undefined;
  readonly #closed: Promise<void>;
  #markClosed: () => void = () => {};

  /**
   * @internal made by {@link prepareCodeModeMcp}, which resolves and checks the settings, or by
   * `createCodeModeMcpServer`, which passes `releaseRuntime` so the server closes the runtime
   * made for it.
   */
  constructor(settings: CodeModeMcpSettings, releaseRuntime?: () => Promise<void>) {
    super(
      { name: settings.name, version: settings.version },
      {
        instructions:
          'Sandboxed code mode: write one JavaScript program that calls the tools declared in the exec tool, and run it with exec.',
      },
    );
    this.#settings = settings;
    this.#releaseRuntime = releaseRuntime;
    this.#closed = new Promise((resolve) => {
      this.#markClosed = resolve;
    });
    this.#registerControls();
    // The client went away (stdin ended, DELETE, a dropped stream) or close() was called.
    this.server.onclose = () => {
      this.#closeSession().catch((error: unknown) => settings.onError(error));
    };
  }

  /**
   * Settles once this client session's code mode is closed: every program ended, every host
   * process gone and every workspace removed. Never rejects; a failed cleanup goes to `onError`
   * (or to whoever awaited {@link CodeModeMcpServer.close}).
   */
  get closed(): Promise<void> {
    return this.#closed;
  }

  /**
   * The directory this session's program workspaces are made in, once its first program started:
   * the runtime's `workspaceRoot`, shared by every session of the same prepared code mode.
   */
  get workspaceRoot(): Promise<string | undefined> {
    return (
      this.#opening?.then((opened) => opened.workspaceRoot).catch(() => undefined) ??
      Promise.resolve(undefined)
    );
  }

  /**
   * Closes the transport, then the code-mode session. Rejects with a `CleanupError` when a
   * process or workspace could not be removed.
   */
  override async close(): Promise<void> {
    try {
      await super.close();
    } finally {
      await this.#closeSession();
    }
  }

  #registerControls(): void {
    const { instructions, observationWindowMs } = this.#settings;
    const seconds = Math.round((observationWindowMs ?? 60_000) / 1000);
    this.registerTool(
      'exec',
      {
        title: 'Run a program',
        description: `Run a JavaScript program that calls the tools declared below. Each exec starts a fresh program with no state from earlier ones; it is watched for up to ${seconds} s and returns as soon as it finishes.\n\n${instructions}`,
        inputSchema: { source: z.string().describe('The program: JavaScript with top-level await.') },
        outputSchema: programResultShape,
      },
      ({ source }, extra) => this.#control(extra, (session, observe) => session.execute(source, observe)),
    );
    this.registerTool(
      'wait',
      {
        title: 'Keep watching the program',
        description: `Watch the program that exec started and that is still working, for up to another ${seconds} s. It does not restart or extend the program and returns only output produced since the last exec or wait. ${statusGuide}`,
        outputSchema: programResultShape,
      },
      (extra) => this.#control(extra, (session, observe) => session.wait(observe)),
    );
    this.registerTool(
      'stop',
      {
        title: 'Stop the program',
        description:
          'End the program that is still working, when its result is no longer needed. Returns its last output with status terminated.',
        outputSchema: programResultShape,
      },
      (extra) => this.#control(extra, (session, observe) => session.stop(observe)),
    );
  }

  async #control(
    request: ControlRequest,
    operation: (
      session: CodeModeSession,
      observe: { signal: AbortSignal; controlCallId: string },
    ) => Promise<ProgramResult>,
  ): Promise<CallToolResult> {
    try {
      const session = await this.#session();
      const result = await operation(session, {
        signal: request.signal,
        controlCallId: String(request.requestId),
      });
      return programResultContent(result);
    } catch (error) {
      return controlErrorContent(error);
    }
  }

  async #session(): Promise<CodeModeSession> {
    if (this.#closing) throw closedError();
    if (this.#opening === undefined) {
      const settings = this.#settings;
      const opening = openCodeModeSession({
        engine: settings.engine,
        tools: settings.tools,
        sandbox: settings.sandbox,
        placement: settings.placement,
        limits: settings.limits,
        maxToolCalls: settings.maxToolCalls,
        prewarm: settings.prewarm,
        runtime: settings.runtime,
        ...(settings.observationWindowMs === undefined
          ? {}
          : { observationWindowMs: settings.observationWindowMs }),
      });
      this.#opening = opening;
      // A failed open is reported to the caller below; the next control call tries again.
      opening.catch(() => {
        if (this.#opening === opening) this.#opening = undefined;
      });
    }
    const opened = await this.#opening;
    // Closed while it opened: the closer owns the session now.
    if (this.#closing) throw closedError();
    return opened.session;
  }

  #closeSession(): Promise<void> {
    this.#closing ??= this.#closeOpened()
      .finally(() => this.#releaseRuntime?.())
      .finally(() => this.#markClosed());
    return this.#closing;
  }

  async #closeOpened(): Promise<void> {
    const opening = this.#opening;
    if (opening === undefined) return;
    let opened: OpenedCodeModeSession;
    try {
      opened = await opening;
    } catch {
      return; // it never opened, so nothing exists to close
    }
    await opened.close();
  }
}

function closedError(): CodeModeStateError {
  return new CodeModeStateError(
    'This MCP session is closed: its programs have ended. Reconnect to start a new session.',
  );
}
