import { defineTool, type Tool, ToolResult } from '@ghost/core';
import type { EmitProgramEvent } from '@ghost/core/tool-calls';
import type { TObject, TString } from 'typebox';
import type { CodeModeSession, ProgramResult } from './engine.js';

// The control tools' input schemas, written out as the JSON Schema typebox's builder would make,
// so importing code mode loads no typebox (its builder alone is a few hundred modules).
const execInput = {
  type: 'object',
  required: ['source'],
  properties: { source: { type: 'string', description: 'The program: JavaScript with top-level await.' } },
} as unknown as TObject<{ source: TString }>;
const noInput = { type: 'object', properties: {} } as unknown as TObject<Record<never, never>>;

/** The names of the control tools the model sees in code mode. */
export const controlToolNames: ReadonlySet<string> = new Set(['exec', 'wait', 'stop']);

/** A program result as the model reads it: the value, with artifacts beside it. */
function toToolResult(result: ProgramResult): ToolResult {
  const { artifacts, ...value } = result;
  return new ToolResult({ value, ...(artifacts ? { artifacts } : {}) });
}

const statusGuide =
  'The result is { status, output, value?, error? }. status still_working means the program is still running: call wait to keep watching it, or stop when you no longer need it. completed, error and terminated are final: there is nothing left to wait for or stop.';

/** What the control tools report programs to: the run's `program_start` / `program_stop` events. */
export interface ProgramEvents {
  readonly emit: EmitProgramEvent;
  readonly engine: string;
  readonly sandbox: string;
}

/**
 * The model-facing control tools of one session. Their timeout covers a full observation
 * window plus a cold host start, so the tool's own timeout never cuts an observation short.
 */
export function createControlTools(
  session: CodeModeSession,
  observationWindowMs: number,
  events?: ProgramEvents,
): Tool[] {
  const timeoutMs = observationWindowMs + 30_000;
  // The exec call that started the running program: program_stop names it.
  let programCallId = '';
  const report = (result: ProgramResult): ToolResult => {
    if (result.status !== 'still_working' && programCallId !== '') {
      events?.emit('program_stop', {
        toolCallId: programCallId,
        status: result.status,
        output: result.output,
        ...(result.value !== undefined ? { value: result.value } : {}),
        ...(result.error !== undefined ? { error: result.error } : {}),
      });
      programCallId = '';
    }
    return toToolResult(result);
  };
  /**
   * A control call stopped by its signal (the run was cancelled or reached its deadline, or the
   * call timed out) ends the program with it: its `program_stop` says so at once, while the run
   * still streams, so every `program_start` has one.
   */
  const observing = async (signal: AbortSignal, work: () => Promise<ProgramResult>): Promise<ToolResult> => {
    const onAbort = () => {
      if (programCallId === '') return;
      const reason: unknown = signal.reason;
      events?.emit('program_stop', {
        toolCallId: programCallId,
        status: 'terminated',
        output: '',
        error: `The program was stopped: ${reason instanceof Error ? reason.message : 'its control call was cancelled'}`,
      });
      programCallId = '';
    };
    signal.addEventListener('abort', onAbort, { once: true });
    try {
      return report(await work());
    } finally {
      signal.removeEventListener('abort', onAbort);
    }
  };
  const seconds = Math.round(observationWindowMs / 1000);
  const exec = defineTool({
    name: 'exec',
    description: `Run a JavaScript program that calls the tools declared in your instructions. Each exec starts a fresh program with no state from earlier ones; it is watched for up to ${seconds} s and returns as soon as it finishes. ${statusGuide}`,
    input: execInput,
    timeoutMs,
    execute: ({ source }, context) =>
      observing(context.signal, () =>
        session.execute(source, {
          signal: context.signal,
          controlCallId: context.toolCallId,
          onProgramStart: () => {
            programCallId = context.toolCallId;
            events?.emit('program_start', {
              toolCallId: context.toolCallId,
              engine: events.engine,
              sandbox: events.sandbox,
              source,
            });
          },
        }),
      ),
  });
  const wait = defineTool({
    name: 'wait',
    description: `Watch the program that exec started and that is still working, for up to another ${seconds} s. It does not restart or extend the program and returns only output produced since the last exec or wait. ${statusGuide}`,
    input: noInput,
    timeoutMs,
    execute: (_input, context) =>
      observing(context.signal, () =>
        session.wait({ signal: context.signal, controlCallId: context.toolCallId }),
      ),
  });
  const stop = defineTool({
    name: 'stop',
    description:
      'End the program that is still working, when its result is no longer needed. Returns its last output with status terminated.',
    input: noInput,
    timeoutMs,
    execute: (_input, context) =>
      observing(context.signal, () =>
        session.stop({ signal: context.signal, controlCallId: context.toolCallId }),
      ),
  });
  return [exec, wait, stop];
}
