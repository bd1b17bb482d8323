import { guestPreludeText } from './guest-prelude-text.js';

/**
 * The guest side of the JavaScript API, shared by every JavaScript engine: the source of
 * `guest-prelude.mjs`, inlined by the build. It is evaluated inside the engine before the
 * program, as an expression giving a function of `(write, toolsJson)` that installs the globals
 * `guestGlobals` lists (in `@ghost/code-mode`) and returns the private {@link GuestControl}
 * object. `write(text)` is the engine's only host function and is never put on a global.
 *
 * Tool calls cross no host function: the prelude queues each call, and the engine collects the
 * queue with `takeCalls()` whenever the guest's jobs have run, and hands results back in batches
 * with `deliverResults(json)`. So a call costs the engine no boundary crossing of its own, and
 * a program's burst of calls is one crossing each way. Values cross as JSON text only, parsed and
 * checked here with the `JSON` captured before the program runs, so a program that replaces
 * `JSON`, `Promise.prototype.then` or pollutes prototypes changes nothing the host relies on.
 *
 * Output is batched the same way: `write` keeps what the program prints and crosses to the host
 * once 16 K characters are waiting, when 10 ms have passed since the last crossing (so a slow
 * program's progress shows while it runs), before its tool calls are taken, and when the program
 * ends. A program that prints millions of lines makes a few hundred crossings, whatever the
 * engine's cost for one.
 */
export const guestPrelude: string = guestPreludeText;

/**
 * What the prelude returns to the engine, never to the program. Each member is a guest function
 * the engine calls:
 * - `settle(programPromise)` resolves to the JSON text of a {@link ProgramCompletion}-like
 *   `{status, value?, error?}` once the program ends (by its value, `exit`/`finish` or a throw);
 * - `takeCalls()` returns the JSON text of the tool calls queued since it was last called, an
 *   array of `{callId, name, input}`, or `undefined` when there are none;
 * - `deliverResults(json)` takes the JSON text of an array of tool call results
 *   (`{callId, ok: true, value}` or `{callId, ok: false, error}`) and settles the calls they answer; results for calls nobody waits on are ignored. It returns how many
 *   calls still wait for a result (none: the program can only go on by itself).
 */
export interface GuestControl {
  readonly settle: unknown;
  readonly takeCalls: unknown;
  readonly deliverResults: unknown;
}

/**
 * Wraps program source as `prepareProgramSource` made it so it runs as an async function body.
 * Its first line is the rewrite's own, so the program's line n is line n + 1 of the wrapped
 * source, as the prelude's error positions assume; the wrapper itself adds no line.
 */
export function wrapProgram(source: string): string {
  return `(async () => {${source}\n})()`;
}
