import type { Artifact, JsonValue } from '@ghost/core';
import { type BrokeredToolCall, ConcurrencyLimit, type ToolCallOutcome } from '@ghost/core/tool-calls';
import type { CodeModeLimits } from './limits.js';
import { errorMessage } from './shared/error-message.js';
import { formatUntrusted } from './shared/format-untrusted.js';
import { formatBytes, keepHeadAndTail } from './shared/head-and-tail.js';
import { exceedsJsonDepth } from './shared/json-depth.js';
import {
  formatToolCallLimit,
  type GuestToolCall,
  maxValueDepth,
  type ToolCallResult,
} from './shared/protocol.js';
import type { ToolCatalog } from './tool-catalog.js';

/** Runs one brokered call through the agent's tool pipeline. */
export type BrokerCallTool = (call: BrokeredToolCall) => Promise<ToolCallOutcome>;

/** The limits the broker applies. */
type BrokerLimits = Pick<CodeModeLimits, 'toolCalls' | 'concurrency' | 'resultBytes'>;

/** The answer to one call, with the size of its JSON, so answers can be batched under the frame cap. */
export interface MeasuredToolCallResult {
  readonly result: ToolCallResult;
  /** The bytes of `result` as JSON. */
  readonly bytes: number;
}

function measuredFailure(callId: string, error: string): MeasuredToolCallResult {
  const result: ToolCallResult = { callId, ok: false, error };
  return { result, bytes: Buffer.byteLength(JSON.stringify(result)) };
}

/** The answer carrying `value`, or a failure when the value is over the limits a result has. */
function measuredValue(
  callId: string,
  identifier: string,
  value: JsonValue,
  resultBytes: number,
): MeasuredToolCallResult {
  if (exceedsJsonDepth(value, maxValueDepth)) {
    return measuredFailure(
      callId,
      `The result of tools.${identifier} nests deeper than ${maxValueDepth} levels of arrays and objects, more than code mode carries, so it was not sent to the program.`,
    );
  }
  let valueBytes: number;
  try {
    valueBytes = Buffer.byteLength(JSON.stringify(value));
  } catch (error) {
    // The agent's pipeline hands over JSON only; a broker given another `callTool` may not.
    return measuredFailure(callId, `The result of tools.${identifier} is not JSON: ${errorMessage(error)}.`);
  }
  if (valueBytes > resultBytes) {
    return measuredFailure(
      callId,
      `The result of tools.${identifier} is ${formatBytes(valueBytes)} bytes of JSON, over the ${formatBytes(resultBytes)}-byte limit (limits.resultBytes), so it was not sent to the program. Ask the tool for less (narrower arguments, fewer items or fields).`,
    );
  }
  const envelope = Buffer.byteLength(JSON.stringify({ callId, ok: true, value: null }));
  return { result: { callId, ok: true, value }, bytes: envelope - 'null'.length + valueBytes };
}

/**
 * The parent side of every tool call a program makes. It accepts only tools in the catalog and
 * runs each call through the agent's own pipeline (validation with the schema the catalog
 * rendered, authorization, the shared `maxToolCalls`, events, timeouts), so a brokered call is
 * checked exactly like a direct one.
 */
export class ToolBroker {
  readonly catalog: ToolCatalog;
  readonly #callTool: BrokerCallTool;
  readonly #limits: BrokerLimits;

  constructor(init: {
    readonly catalog: ToolCatalog;
    readonly callTool: BrokerCallTool;
    readonly limits: Pick<CodeModeLimits, 'toolCalls' | 'concurrency' | 'resultBytes'>;
  }) {
    this.catalog = init.catalog;
    this.#callTool = init.callTool;
    this.#limits = init.limits;
  }

  /**
   * The calls of one program: counted against `limits.toolCalls`, at most `limits.concurrency`
   * in flight (the rest wait in order), results bounded by `limits.resultBytes`, all cancelled
   * by `end()`.
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
  readonly #limits: BrokerLimits;
  /** Made for the first call that runs: most programs end with none in flight, and then nothing is aborted. */
  #controller: AbortController | undefined;
  #isEnded = false;
  readonly #concurrency: ConcurrencyLimit;
  #artifacts: Artifact[] = [];
  #accepted = 0;

  constructor(
    programId: string,
    parentCallId: () => string,
    catalog: ToolCatalog,
    callTool: BrokerCallTool,
    limits: Pick<CodeModeLimits, 'toolCalls' | 'concurrency' | 'resultBytes'>,
  ) {
    this.#programId = programId;
    this.#parentCallId = parentCallId;
    this.#catalog = catalog;
    this.#callTool = callTool;
    this.#limits = limits;
    this.#concurrency = new ConcurrencyLimit(limits.concurrency);
  }

  /** True once the program ended; later results are dropped. */
  get isEnded(): boolean {
    return this.#isEnded;
  }

  /**
   * Runs one guest call. Never rejects: a failure is a result the program receives as a
   * rejection. Every call counts toward `limits.toolCalls`, whether or not it runs.
   */
  async call(call: GuestToolCall): Promise<MeasuredToolCallResult> {
    const { callId } = call;
    const { toolCalls, resultBytes } = this.#limits;
    const entry = this.#catalog.find(call.name);
    if (this.#accepted >= toolCalls) {
      return measuredFailure(callId, formatToolCallLimit(toolCalls));
    }
    this.#accepted += 1;
    if (!entry) {
      const names = this.#catalog.tools.map((tool) => tool.identifier).join(', ') || 'none';
      return measuredFailure(
        callId,
        `Unknown tool ${formatUntrusted(call.name)}. Available tools: ${names}.`,
      );
    }
    return this.#concurrency.run(async () => {
      if (this.isEnded) return measuredFailure(callId, 'The program ended before this call ran.');
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
        return measuredFailure(callId, errorMessage(error));
      }
      if (this.isEnded) return measuredFailure(callId, 'The program ended before this call finished.');
      for (const artifact of outcome.artifacts) this.#artifacts.push(artifact);
      if (outcome.status === 'success') {
        return measuredValue(callId, entry.identifier, (outcome.value ?? null) as JsonValue, resultBytes);
      }
      return measuredFailure(
        callId,
        keepHeadAndTail(outcome.content, resultBytes, { what: 'the error message', limit: 'resultBytes' }),
      );
    });
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
    if (this.#concurrency.running > 0) this.#controller?.abort(new Error(reason));
    // Queued calls see the program ended and return at once, without waiting for in-flight ones.
    this.#concurrency.startAllWaiting();
  }
}
