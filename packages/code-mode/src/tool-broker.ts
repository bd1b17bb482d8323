import type { Artifact, BrokeredToolCall, JsonValue, ToolCallOutcome } from '@ghost/core';
import type { CodeModeLimits } from './limits.js';
import type { GuestToolCall, ToolCallResult } from './protocol.js';
import type { ToolCatalog } from './tool-catalog.js';

/** Runs one brokered call through the agent's tool pipeline. */
export type BrokerCallTool = (call: BrokeredToolCall) => Promise<ToolCallOutcome>;

/**
 * The parent side of every tool call a program makes. It accepts only tools in the catalog and
 * runs each call through the agent's own pipeline (validation with the schema the catalog
 * rendered, authorization, the shared `maxToolCalls`, events, timeouts), so a brokered call is
 * checked exactly like a direct one.
 */
export class ToolBroker {
  readonly catalog: ToolCatalog;
  readonly #callTool: BrokerCallTool;
  readonly #limits: Pick<CodeModeLimits, 'toolCalls' | 'concurrency'>;

  constructor(init: {
    readonly catalog: ToolCatalog;
    readonly callTool: BrokerCallTool;
    readonly limits: Pick<CodeModeLimits, 'toolCalls' | 'concurrency'>;
  }) {
    this.catalog = init.catalog;
    this.#callTool = init.callTool;
    this.#limits = init.limits;
  }

  /**
   * The calls of one program: counted against `limits.toolCalls`, at most `limits.concurrency`
   * in flight (the rest wait in order), all cancelled by `end()`.
   */
  openProgram(programId: string, parentCallId: () => string): ProgramToolCalls {
    return new ProgramToolCalls(programId, parentCallId, this.catalog, this.#callTool, this.#limits);
  }
}

/** The tool calls of one program. */
export class ProgramToolCalls {
  readonly #programId: string;
  readonly #parentCallId: () => string;
  readonly #catalog: ToolCatalog;
  readonly #callTool: BrokerCallTool;
  readonly #limits: Pick<CodeModeLimits, 'toolCalls' | 'concurrency'>;
  /** Made for the first call that runs: most programs end with none in flight, and then nothing is aborted. */
  #controller: AbortController | undefined;
  #isEnded = false;
  readonly #waiting: (() => void)[] = [];
  #artifacts: Artifact[] = [];
  #accepted = 0;
  #inFlight = 0;

  constructor(
    programId: string,
    parentCallId: () => string,
    catalog: ToolCatalog,
    callTool: BrokerCallTool,
    limits: Pick<CodeModeLimits, 'toolCalls' | 'concurrency'>,
  ) {
    this.#programId = programId;
    this.#parentCallId = parentCallId;
    this.#catalog = catalog;
    this.#callTool = callTool;
    this.#limits = limits;
  }

  /** True once the program ended; later results are dropped. */
  get isEnded(): boolean {
    return this.#isEnded;
  }

  /** Runs one guest call. Never rejects: a failure is a result the program receives as a rejection. */
  async call(call: GuestToolCall): Promise<ToolCallResult> {
    const { callId } = call;
    const entry = this.#catalog.find(call.name);
    if (!entry) {
      const names = this.#catalog.tools.map((tool) => tool.identifier).join(', ') || 'none';
      return { callId, ok: false, error: `Unknown tool '${call.name}'. Available tools: ${names}.` };
    }
    if (this.#accepted >= this.#limits.toolCalls) {
      return {
        callId,
        ok: false,
        error: `This program reached its limit of ${this.#limits.toolCalls} tool calls (limits.toolCalls); make fewer calls per program.`,
      };
    }
    this.#accepted += 1;
    await this.#enter();
    try {
      if (this.isEnded) return { callId, ok: false, error: 'The program ended before this call ran.' };
      this.#controller ??= new AbortController();
      let outcome: ToolCallOutcome;
      try {
        outcome = await this.#callTool({
          toolCallId: `code-mode-${this.#programId}-${callId}`,
          toolName: entry.name,
          input: call.input,
          parentToolCallId: this.#parentCallId(),
          signal: this.#controller.signal,
        });
      } catch (error) {
        // The run was cancelled or hit its deadline: the program ends with it.
        return { callId, ok: false, error: (error as Error).message };
      }
      if (this.isEnded) return { callId, ok: false, error: 'The program ended before this call finished.' };
      this.#artifacts.push(...outcome.artifacts);
      if (outcome.status === 'success')
        return { callId, ok: true, value: (outcome.value ?? null) as JsonValue };
      return { callId, ok: false, error: outcome.content };
    } finally {
      this.#leave();
    }
  }

  /** Artifacts of the calls finished since the last time they were taken. */
  takeArtifacts(): Artifact[] {
    const taken = this.#artifacts;
    this.#artifacts = [];
    return taken;
  }

  /**
   * Ends the program's calls: in-flight calls see their signal abort, queued ones never run. With
   * no call in flight (the usual end of a program) there is nothing to abort, and aborting costs
   * an error's stack trace and an event dispatch between a program's `done` and its result.
   */
  end(reason = 'The program ended.'): void {
    if (this.#isEnded) return;
    this.#isEnded = true;
    if (this.#inFlight > 0) this.#controller?.abort(new Error(reason));
    for (const start of this.#waiting.splice(0)) start();
  }

  async #enter(): Promise<void> {
    if (this.#inFlight < this.#limits.concurrency && this.#waiting.length === 0) {
      this.#startOne();
      return;
    }
    await new Promise<void>((start) => this.#waiting.push(start));
    this.#startOne();
  }

  #startOne(): void {
    this.#inFlight += 1;
  }

  #leave(): void {
    this.#inFlight -= 1;
    const next = this.#waiting.shift();
    next?.();
  }
}
