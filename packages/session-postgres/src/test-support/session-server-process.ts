import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

/** The script the reliability tests start as application servers. */
const sessionServerScript = fileURLToPath(new URL('./session-server.mjs', import.meta.url));

/** What an `ask` command answered. */
export interface AskReply {
  readonly outcome: string;
  /** The approval ids a suspended run waits for. */
  readonly approvalIds: readonly string[];
  readonly response: string;
  readonly error?: {
    readonly name: string;
    readonly code?: string;
    readonly reason?: string;
    readonly store?: string;
    readonly message: string;
  };
  /** The messages of each model call, as roles and text. */
  readonly seen: readonly (readonly { readonly role: string; readonly content: string }[])[];
}

type Reply = Record<string, unknown>;

/**
 * One `session-server.mjs` process: send commands, await their replies and events. `kill()` sends
 * SIGKILL; `stop()` closes the store and waits for the exit, killing it if it does not come.
 */
export class SessionServerProcess {
  readonly child: ChildProcess;
  readonly #pending = new Map<number, (reply: Reply) => void>();
  readonly #eventWaiters: { event: string; resolve: () => void }[] = [];
  readonly #stderr: string[] = [];
  readonly exited: Promise<unknown>;
  #nextId = 1;
  /** A `{ fatal }` line the server printed: an unhandled error in it. */
  fatal: string | undefined;

  private constructor(child: ChildProcess) {
    this.child = child;
    this.exited = once(child, 'exit');
    createInterface({ input: child.stdout! }).on('line', (line) => this.#read(line));
    child.stderr?.on('data', (chunk: Buffer) => {
      this.#stderr.push(chunk.toString('utf8'));
    });
  }

  /**
   * Starts a server on `connectionString` and `schema`, resolved once it says it is ready. Its
   * `refund` tool appends a line to `executions` each time it runs.
   */
  static async start(
    connectionString: string,
    schema: string,
    executions = '',
  ): Promise<SessionServerProcess> {
    const child = spawn(process.execPath, [sessionServerScript], {
      stdio: ['pipe', 'pipe', 'pipe'],
      env: {
        ...process.env,
        GHOST_PG_URL: connectionString,
        GHOST_PG_SCHEMA: schema,
        GHOST_EXECUTIONS: executions,
      },
    });
    const server = new SessionServerProcess(child);
    await server.nextEvent('ready');
    return server;
  }

  #read(line: string): void {
    let reply: Reply;
    try {
      reply = JSON.parse(line) as Reply;
    } catch {
      return; // not ours
    }
    if (typeof reply.fatal === 'string') this.fatal = reply.fatal;
    if (typeof reply.event === 'string') {
      const index = this.#eventWaiters.findIndex((waiter) => waiter.event === reply.event);
      if (index >= 0) this.#eventWaiters.splice(index, 1)[0]?.resolve();
    }
    if (typeof reply.requestId === 'number') {
      this.#pending.get(reply.requestId)?.(reply);
      this.#pending.delete(reply.requestId);
    }
  }

  /** Resolves at the next `{ event }` line of that name (or rejects if the process exits first). */
  nextEvent(event: string): Promise<void> {
    const seen = new Promise<void>((resolve) => this.#eventWaiters.push({ event, resolve }));
    return Promise.race([
      seen,
      this.exited.then(() => {
        throw new Error(
          `the session server exited before '${event}':\n${this.#stderr.join('')}${this.fatal ?? ''}`,
        );
      }),
    ]);
  }

  /** Sends a command; resolves with its reply (or rejects if the process exits first). */
  request(command: Record<string, unknown>): Promise<Reply> {
    const requestId = this.#nextId++;
    const replied = new Promise<Reply>((resolve) => this.#pending.set(requestId, resolve));
    this.child.stdin?.write(`${JSON.stringify({ ...command, requestId })}\n`);
    return Promise.race([
      replied,
      this.exited.then(() => {
        throw new Error(
          `the session server exited before replying:\n${this.#stderr.join('')}${this.fatal ?? ''}`,
        );
      }),
    ]);
  }

  /** Runs `agent.ask(text, { session })` with a ScriptedModel of `steps` in the server. */
  async ask(
    text: string,
    session: Record<string, unknown>,
    steps: readonly unknown[],
    options: { readonly approvals?: 'suspend' } = {},
  ): Promise<AskReply> {
    return this.#run({ op: 'ask', text, session, steps, ...options });
  }

  /**
   * Runs `agent.resume({ session, decisions })` with a ScriptedModel of `steps` in the server; with
   * `blockInRefund`, an approved `refund` never returns (it sends the event `in-refund`).
   */
  async resume(
    session: Record<string, unknown>,
    decisions: Record<string, unknown> | undefined,
    steps: readonly unknown[],
    options: { readonly blockInRefund?: boolean } = {},
  ): Promise<AskReply> {
    return this.#run({ op: 'resume', session, decisions, steps, ...options });
  }

  async #run(command: Record<string, unknown>): Promise<AskReply> {
    const reply = await this.request(command);
    if (reply.thrown !== undefined)
      throw new Error(`${String(command.op)} threw in the server: ${JSON.stringify(reply.thrown)}`);
    return reply as unknown as AskReply;
  }

  kill(): void {
    this.child.kill('SIGKILL');
  }

  /** Closes the server's store and waits for it to exit; kills it after 10 s. */
  async stop(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const timer = setTimeout(() => this.kill(), 10_000);
    try {
      await this.request({ op: 'close' }).catch(() => {});
      await this.exited;
    } finally {
      clearTimeout(timer);
    }
  }
}
