import { defineTool, type Tool } from '@ghost/core';
import type { ScriptedModel } from '@ghost/core/testing';
import { Type } from 'typebox';
import type { CodeModeSession, ProgramResult } from '../../engine.js';

/** A gate a tool waits on, so a test decides when a call finishes. */
export class Gate {
  #open: () => void = () => {};
  readonly opened = new Promise<void>((resolve) => {
    this.#open = resolve;
  });
  open(): void {
    this.#open();
  }
}

/** The content of the last message the model's second call received: the first tool result. */
export function lastToolContent(model: ScriptedModel): string {
  const message = model.calls[1]?.messages.at(-1);
  return message?.role === 'tool' ? message.content : '';
}

/** A tool that answers 'opened' once the test opens `gate`. */
export function gateTool(gate: Gate): Tool {
  return defineTool({
    name: 'wait_for_gate',
    description: 'Waits for the test.',
    input: Type.Object({}),
    execute: async () => {
      await gate.opened;
      return 'opened';
    },
  });
}

/** A tool whose call never returns, so only the program's end can stop it. */
export function foreverTool(): Tool {
  return defineTool({
    name: 'forever',
    description: 'Never returns.',
    input: Type.Object({}),
    execute: () => new Promise(() => {}),
  });
}

/** Resolves after `milliseconds`. */
export const delay = (milliseconds: number) => new Promise((resolve) => setTimeout(resolve, milliseconds));

/** Sends SIGKILL, unless the process has already ended. */
export function killQuietly(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ESRCH') throw error;
  }
}

/** A tool that returns its input and records each text in `log`. */
export function echoTool(log: unknown[] = []): Tool {
  return defineTool({
    name: 'echo',
    description: 'Returns its input.',
    input: Type.Object({ text: Type.String() }),
    execute: ({ text }) => {
      log.push(text);
      return { text };
    },
  });
}

/**
 * Watches a program with `wait` from `first` (an observation's result) until it reaches a final
 * status, with the output of every observation joined. For cases with short observation windows:
 * exec's window covers the host's start, which a loaded machine may not finish within it.
 */
export async function observeToEnd(session: CodeModeSession, first: ProgramResult): Promise<ProgramResult> {
  let result = first;
  let output = '';
  for (;;) {
    output += result.output;
    if (result.status !== 'still_working') return { ...result, output };
    result = await session.wait();
  }
}
