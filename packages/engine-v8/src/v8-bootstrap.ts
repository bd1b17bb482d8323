/** The global the program script reads its start function from; it is gone before the program runs. */
const programStartKey = '\u0000start';

/**
 * The guest side of the V8 bridge, evaluated in a fresh context before the program. It is a
 * function of `(post, write, toolsJson)`: `post` and `write` are the only host functions the
 * guest can call (`ivm.Callback`s), and they stay in this function's scope, never on a global,
 * so the program can call tools through the shared prelude but can never reach, replace or wrap
 * a host function itself. Everything that crosses is a string or a number:
 *
 * - guest → host: `write(text)`, the prelude's batches of output, which waits for the host to
 *   take each batch (so a program printing faster than the host reads is held back, and no
 *   output piles up between them); `post('done', completionJson)`, and `post('ended', '')` once
 *   the program's own promise settles (so the host can tell a program whose outcome could not be
 *   read from one that waits), which do not wait;
 * - host → guest: the function the bootstrap returns, `exchange(op, text)`: `exchange('take')`
 *   returns the JSON text of the tool calls the prelude queued (or `undefined`), and
 *   `exchange('deliver', resultsJson)` settles the calls the results answer.
 *
 * The program is the script {@link programScript}: it takes its start function from a global
 * getter that removes itself when read, before any of the program's code runs, and holds it
 * only on the evaluation stack. So the program's promise is settled in the task that created it
 * (isolated-vm reports a rejection still unhandled at a task's end), and no name reaches it.
 *
 * The builtins it relies on are captured before the program runs, so a program that replaces
 * `Promise.prototype.then` or pollutes `Object.prototype` changes nothing the host relies on.
 * It also removes `WebAssembly` (wasm memory is not counted by the isolate's memory limit) and
 * `SharedArrayBuffer` (a guest needs no shared memory and could block its thread on it).
 */
export function v8Bootstrap(prelude: string): string {
  return `(function (post, write, toolsJson) {
  'use strict';
  var apply = Reflect.apply;
  var then = Promise.prototype.then;
  var toText = String;
  delete globalThis.WebAssembly;
  delete globalThis.SharedArrayBuffer;

  var control = (${prelude})(function (text) { write(toText(text)); }, toolsJson);
  var settle = control.settle;
  var takeCalls = control.takeCalls;
  var deliverResults = control.deliverResults;

  function exchange(op, text) {
    if (op === 'take') return takeCalls();
    if (op === 'deliver') deliverResults(toText(text));
    return undefined;
  }

  function start(program) {
    function ended() { post('ended', ''); }
    apply(then, settle(program), [function (completionJson) { post('done', completionJson); }]);
    apply(then, program, [ended, ended]);
  }

  Object.defineProperty(globalThis, ${JSON.stringify(programStartKey)}, {
    configurable: true,
    enumerable: false,
    get: function () {
      delete globalThis[${JSON.stringify(programStartKey)}];
      return start;
    },
  });
  return exchange;
})`;
}

/** The script that runs `source` (a wrapped program) and hands its promise to the bootstrap. */
export function programScript(source: string): string {
  return `globalThis[${JSON.stringify(programStartKey)}](${source})`;
}
