import { type ChildProcess, spawn } from 'node:child_process';
import type { Writable } from 'node:stream';
import { ReadBuffer, serializeMessage } from '@modelcontextprotocol/sdk/shared/stdio.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { McpLimitError } from './errors.js';
import { cgroupMembers, createServerCgroup, endServerCgroup } from './server-cgroup.js';
import { stdioLauncherSource } from './stdio-launcher.js';

/** How to start a stdio MCP server. */
export interface StdioProcessOptions {
  readonly command: string;
  readonly args: readonly string[];
  /** The server's whole environment: nothing of this process's environment is added. */
  readonly env: Readonly<Record<string, string>>;
  readonly cwd?: string;
  /** The largest message the server may send, in bytes (one JSON line). */
  readonly maxMessageBytes: number;
  /** How many bytes of the server's stderr to keep for error messages. */
  readonly stderrTailBytes?: number;
  /**
   * Whether the server may get a cgroup of its own where this process can make one (Linux).
   * Default true; false keeps it to its process group and the descendants found through parent
   * pids, as on other systems.
   */
  readonly isCgroupWanted?: boolean;
}

/** The command, arguments and spawn options that start a server under its watchdog. */
export interface LauncherSpawnPlan {
  readonly command: string;
  readonly args: readonly string[];
  readonly env: Record<string, string>;
  readonly cwd?: string;
}

/**
 * How a stdio server is started: this Node.js running the watchdog, which runs the server with
 * exactly `env`, inside `cgroup` when one is given. Its stdio is `['pipe', 'pipe', 'pipe', 'pipe']`;
 * fd 3 is the watchdog's lifeline.
 */
export function launcherSpawnPlan(
  options: Pick<StdioProcessOptions, 'command' | 'args' | 'env' | 'cwd'> & { readonly cgroup?: string },
): LauncherSpawnPlan {
  return {
    command: process.execPath,
    args: ['-e', stdioLauncherSource, '--', options.cgroup ?? '', options.command, ...options.args],
    env: { ...options.env },
    ...(options.cwd !== undefined ? { cwd: options.cwd } : {}),
  };
}

/** How long `close()` waits for the server and all it started to end before it gives up. */
const closeTimeoutMs = 5_000;

/** How long the last output of a server that has ended may take to be read. */
const outputSettleMs = 1_000;

/**
 * An MCP transport over a server's stdin and stdout, newline-delimited JSON, with the server
 * started through a watchdog (see `stdio-launcher.ts`) so it never outlives this process.
 * A message longer than `maxMessageBytes` closes the transport with an `McpLimitError`, so a
 * server cannot make this process buffer without bound.
 */
export class StdioProcessTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  readonly #options: StdioProcessOptions;
  readonly #readBuffer: ReadBuffer;
  #process: ChildProcess | undefined;
  /** The server's cgroup, when it has one: it holds everything the server started. */
  #cgroup: string | undefined;
  #stderrTail = '';
  /** Resolves when the watchdog has exited. */
  #watchdogExited: Promise<void> | undefined;
  /** Resolves when the watchdog has exited and every pipe of the server is closed. */
  #exited: Promise<void> | undefined;
  #isClosed = false;
  /** Why the transport closed, when it was not asked to: an exit, a message over the cap. */
  closeReason: Error | undefined;

  constructor(options: StdioProcessOptions) {
    this.#options = options;
    this.#readBuffer = new ReadBuffer({ maxBufferSize: options.maxMessageBytes });
  }

  /** The launcher's process id (the server runs in its own process group under it). */
  get pid(): number | undefined {
    return this.#process?.pid;
  }

  /** The last bytes the server wrote to stderr, for error messages. */
  get stderrTail(): string {
    return this.#stderrTail;
  }

  /** The server's cgroup directory, when it runs in one. */
  get cgroup(): string | undefined {
    return this.#cgroup;
  }

  async start(): Promise<void> {
    this.#cgroup = this.#options.isCgroupWanted === false ? undefined : await createServerCgroup();
    const cgroup = this.#cgroup;
    try {
      await this.#spawn(launcherSpawnPlan({ ...this.#options, ...(cgroup ? { cgroup } : {}) }));
    } catch (error) {
      // The watchdog never ran, so nothing joined the cgroup.
      if (cgroup) await endServerCgroup(cgroup, Date.now());
      throw error;
    }
  }

  #spawn(plan: LauncherSpawnPlan): Promise<void> {
    return new Promise((resolve, reject) => {
      const child = spawn(plan.command, plan.args, {
        env: plan.env,
        ...(plan.cwd !== undefined ? { cwd: plan.cwd } : {}),
        stdio: ['pipe', 'pipe', 'pipe', 'pipe'],
        windowsHide: true,
      });
      this.#process = child;
      this.#watchdogExited = new Promise((resolveExit) => child.once('exit', () => resolveExit()));
      this.#exited = new Promise((resolveExit) => {
        // 'close' comes after stdout has been read to its end, so a last response is not lost.
        child.once('close', (code, signal) => {
          const how = signal === null ? `code ${code}` : `signal ${signal}`;
          const stderr = this.#stderrTail.trim();
          this.#fail(
            new Error(
              `The MCP server process exited (${how})${stderr === '' ? '' : `; its stderr ended with: ${stderr}`}`,
            ),
          );
          resolveExit();
        });
      });
      // Node destroys stdin when the child exits, but not fd 3, and 'close' waits for every pipe.
      child.once('exit', () => (child.stdio[3] as Writable | null)?.destroy());
      child.once('error', (error) => {
        this.#fail(error);
        reject(error);
      });
      child.once('spawn', () => resolve());
      child.stdout?.on('data', (chunk: Buffer) => this.#receive(chunk));
      child.stderr?.on('data', (chunk: Buffer) => {
        const limit = this.#options.stderrTailBytes ?? 2_000;
        this.#stderrTail = (this.#stderrTail + chunk.toString('utf8')).slice(-limit);
      });
      // Writes to a server that has exited fail with EPIPE; the exit itself is what we report.
      child.stdin?.on('error', () => {});
      (child.stdio[3] as Writable | null)?.on('error', () => {});
    });
  }

  #receive(chunk: Buffer): void {
    try {
      this.#readBuffer.append(chunk);
    } catch {
      this.#fail(
        new McpLimitError(
          `The MCP server sent a message over ${this.#options.maxMessageBytes} bytes (limits.maxMessageBytes); the connection was closed. Raise the limit if the server is trusted to send that much.`,
        ),
      );
      // close() rejects when the watchdog outlives its deadline: reported, never unhandled.
      this.close().catch((error: unknown) => this.onerror?.(error as Error));
      return;
    }
    for (;;) {
      let message: JSONRPCMessage | null;
      try {
        message = this.#readBuffer.readMessage();
      } catch (error) {
        // One malformed line is reported and skipped; the connection stays usable.
        this.onerror?.(error as Error);
        continue;
      }
      if (message === null) return;
      this.onmessage?.(message);
    }
  }

  #fail(error: Error): void {
    if (this.closeReason === undefined) this.closeReason = error;
    if (this.#isClosed) return;
    this.#isClosed = true;
    this.#readBuffer.clear();
    this.onerror?.(error);
    this.onclose?.();
  }

  send(message: JSONRPCMessage): Promise<void> {
    const stdin = this.#process?.stdin;
    if (this.#isClosed || !stdin || stdin.destroyed) {
      return Promise.reject(this.closeReason ?? new Error('The MCP server connection is closed.'));
    }
    return new Promise((resolve, reject) => {
      stdin.write(serializeMessage(message), (error) => (error ? reject(error) : resolve()));
    });
  }

  /**
   * Ends the server: closes its stdin and the watchdog's pipe, then asks the watchdog to end the
   * server and everything it started. Then, as a backstop (a watchdog that was killed itself
   * ends nothing), kills whatever is left in the server's cgroup and removes it. Resolves when all
   * of it has ended; rejects if it has not within five seconds even after SIGKILL.
   */
  async close(): Promise<void> {
    const child = this.#process;
    if (!this.#isClosed) {
      this.#isClosed = true;
      this.onclose?.();
    }
    if (!child || !this.#exited || !this.#watchdogExited) return;
    const deadline = Date.now() + closeTimeoutMs;
    if (child.exitCode === null && child.signalCode === null) {
      child.stdin?.end();
      (child.stdio[3] as Writable | null)?.destroy();
      child.kill('SIGTERM');
    }
    if ((await beforeDeadline(this.#watchdogExited, deadline)) === undefined) {
      child.kill('SIGKILL');
      throw new Error(
        `The MCP server's watchdog (pid ${child.pid}) did not exit within ${closeTimeoutMs} ms.`,
      );
    }
    const cgroup = this.#cgroup;
    if (cgroup !== undefined && !(await endServerCgroup(cgroup, deadline))) {
      throw new Error(
        `Processes of the MCP server (cgroup ${cgroup}: ${(await cgroupMembers(cgroup)).join(', ')}) did not end within ${closeTimeoutMs} ms, even after SIGKILL.`,
      );
    }
    // Everything it could reach is gone; the pipes close once their last output is read. A
    // process out of reach (a daemon where there is no cgroup) may hold them: they are let go.
    if ((await beforeDeadline(this.#exited, Math.max(deadline, Date.now() + outputSettleMs))) === undefined) {
      child.stdout?.destroy();
      child.stderr?.destroy();
    }
  }
}

/** Waits for `work` until `deadline` (a `Date.now()` value); undefined when the deadline came first. */
async function beforeDeadline(work: Promise<void>, deadline: number): Promise<true | undefined> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), Math.max(0, deadline - Date.now()));
  });
  try {
    return await Promise.race([work.then(() => true as const), timeout]);
  } finally {
    clearTimeout(timer);
  }
}
