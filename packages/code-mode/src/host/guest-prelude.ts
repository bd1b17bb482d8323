/**
 * The guest side of the JavaScript API (DESIGN §3), shared by every JavaScript engine. It is
 * evaluated inside the engine before the program, as an expression giving a function of
 * `(write, toolsJson)` that installs the globals and returns the private {@link GuestControl}
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
export const guestPrelude = String.raw`(function (writeOutput, toolsJson) {
  'use strict';
  var PromiseConstructor = Promise;
  // Captured before the program runs: a program that replaces a builtin breaks only its own use of it.
  var promiseThen = Promise.prototype.then;
  var promiseReject = Promise.reject;
  var dateNow = Date.now;
  var reflectApply = Reflect.apply;
  var MapConstructor = Map;
  var regexpExec = RegExp.prototype.exec;
  var arrayPush = Array.prototype.push;
  var arrayJoin = Array.prototype.join;
  var mapGet = Map.prototype.get;
  var mapSet = Map.prototype.set;
  var mapDelete = Map.prototype.delete;
  var toText = String;
  var parse = JSON.parse;
  var stringify = JSON.stringify;
  var freeze = Object.freeze;
  var define = Object.defineProperty;
  var isArray = Array.isArray;
  var keysOf = Object.keys;
  var catalog = parse(toolsJson);
  var byName = new Map();
  var identifiers = [];
  for (var index = 0; index < catalog.length; index += 1) {
    var entry = catalog[index];
    byName.set(entry.name, entry);
    byName.set(entry.identifier, entry);
    byName.set('tools.' + entry.identifier, entry);
    identifiers.push(entry.identifier);
  }
  var finished = null;
  var onFinish = null;
  var nextCallId = 1;
  var waitingCalls = new Map();
  var waitingCount = 0;
  var queuedCalls = [];
  var exitSignal = freeze({});
  // Kept as one string, not a list: appending costs no call a program could have replaced.
  var outputText = '';
  var outputSentAt = 0;
  var outputBatchLength = 16384;
  var outputBatchMs = 10;

  function describePath(path) { return path === '' ? 'the top level' : path; }

  // JSON text of value, checked as JSON.stringify walks it (after each toJSON()), so every
  // problem is named with its path and toJSON() runs once.
  function checkJson(value, what) {
    // Made at the first object: most values printed are not objects.
    var holders;
    var paths;
    function pathOf(holder, key) {
      var base = paths ? reflectApply(mapGet, paths, [holder]) : undefined;
      if (typeof base !== 'string') return '';
      return isArray(holder) ? base + '[' + key + ']' : base + '.' + key;
    }
    function check(key, item) {
      var kind = typeof item;
      if (kind === 'bigint') throw new TypeError(what + ' is not JSON: a BigInt at ' + describePath(pathOf(this, key)) + '; convert it with String() or Number().');
      if (kind === 'function') throw new TypeError(what + ' is not JSON: a function at ' + describePath(pathOf(this, key)) + '.');
      if (kind === 'symbol') throw new TypeError(what + ' is not JSON: a Symbol at ' + describePath(pathOf(this, key)) + '.');
      if (kind === 'object' && item !== null) {
        if (!holders) {
          holders = new MapConstructor();
          paths = new MapConstructor();
        }
        for (var holder = this; holder !== undefined; holder = reflectApply(mapGet, holders, [holder])) {
          if (holder === item) throw new TypeError(what + ' is not JSON: it refers to itself at ' + describePath(pathOf(this, key)) + '.');
        }
        reflectApply(mapSet, holders, [item, this]);
        reflectApply(mapSet, paths, [item, pathOf(this, key)]);
      }
      return item;
    }
    var json = stringify(value, check);
    if (typeof json !== 'string') {
      var reason = typeof value === 'undefined' ? 'it is undefined.' : 'its toJSON() returned undefined.';
      throw new TypeError(what + ' is not JSON: ' + reason);
    }
    return json;
  }

  // The program's first line in program.js is the wrapper's and the rewrite's own (see
  // prepareProgramSource), so program.js line n + 1 is the program's line n.
  function describeError(error) {
    if (error && typeof error === 'object' && typeof error.message === 'string') {
      var name = typeof error.name === 'string' && error.name !== '' ? error.name : 'Error';
      var where = '';
      var match = typeof error.stack === 'string' ? reflectApply(regexpExec, /program\.js:(\d+)(?::(\d+))?/, [error.stack]) : null;
      var line = match ? +match[1] - 1 : 0;
      if (line >= 1) where = ' (line ' + line + (match[2] ? ', column ' + match[2] : '') + ')';
      return name + ': ' + error.message + where;
    }
    try { return 'Uncaught ' + toText(error); } catch (ignored) { return 'Uncaught exception'; }
  }

  function formatValue(value) {
    if (typeof value === 'string') return value;
    if (value instanceof Error) return describeError(value);
    if (typeof value === 'undefined') return 'undefined';
    if (typeof value === 'function') return '[Function ' + (value.name || 'anonymous') + ']';
    if (typeof value === 'bigint') return toText(value) + 'n';
    if (typeof value === 'number' || typeof value === 'boolean' || value === null) return stringify(value);
    if (typeof value === 'symbol') return toText(value);
    try { var json = checkJson(value, 'It'); return typeof json === 'string' ? json : toText(value); } catch (ignored) { return toText(value); }
  }

  function flushOutput() {
    if (outputText === '') return;
    var text = outputText;
    outputText = '';
    outputSentAt = dateNow();
    writeOutput(text);
  }

  // Once the program has finished (exit, finish), nothing it does afterwards is seen.
  function write(text) {
    if (finished) return;
    outputText += text;
    if (outputText.length >= outputBatchLength || dateNow() - outputSentAt >= outputBatchMs) flushOutput();
  }

  function callTool(name, args) {
    if (finished) return reflectApply(promiseReject, PromiseConstructor, [new Error('The program has finished; it makes no more tool calls.')]);
    var entry = reflectApply(mapGet, byName, [toText(name)]);
    if (!entry) return reflectApply(promiseReject, PromiseConstructor, [new Error("Unknown tool '" + toText(name) + "'. Available tools: " + (reflectApply(arrayJoin, identifiers, [', ']) || 'none') + '.')]);
    var input;
    try {
      input = checkJson(typeof args === 'undefined' ? {} : args, 'The arguments of tools.' + entry.identifier);
    } catch (error) {
      return reflectApply(promiseReject, PromiseConstructor, [error]);
    }
    var callId = toText(nextCallId);
    nextCallId += 1;
    reflectApply(arrayPush, queuedCalls, ['{"callId":"' + callId + '","name":' + stringify(entry.name) + ',"input":' + input + '}']);
    return new PromiseConstructor(function (resolve, reject) {
      reflectApply(mapSet, waitingCalls, [callId, { resolve: resolve, reject: reject }]);
      waitingCount += 1;
    });
  }

  function takeCalls() {
    // Output written before a call reaches the host before the call.
    flushOutput();
    if (queuedCalls.length === 0) return undefined;
    var calls = '[' + reflectApply(arrayJoin, queuedCalls, [',']) + ']';
    queuedCalls = [];
    return calls;
  }

  function deliverResults(resultsJson) {
    var results = parse(resultsJson);
    for (var at = 0; at < results.length; at += 1) {
      var result = results[at];
      var waiting = reflectApply(mapGet, waitingCalls, [result.callId]);
      if (!waiting) continue;
      reflectApply(mapDelete, waitingCalls, [result.callId]);
      waitingCount -= 1;
      if (result.ok) waiting.resolve(typeof result.value === 'undefined' ? null : result.value);
      else waiting.reject(new Error(toText(result.error)));
    }
    return waitingCount;
  }

  var methods = Object.create(null);
  for (var position = 0; position < catalog.length; position += 1) {
    (function (tool) {
      methods[tool.identifier] = function (args) { return callTool(tool.name, args); };
    })(catalog[position]);
  }
  methods.call = function (name, args) { return callTool(name, args); };
  methods.parallel = function () {
    var calls = arguments.length === 1 && isArray(arguments[0]) ? arguments[0] : Array.prototype.slice.call(arguments);
    return Promise.all(calls.map(function (call) { return typeof call === 'function' ? call() : call; }));
  };
  freeze(methods);
  var tools = new Proxy(methods, {
    get: function (target, property) {
      if (typeof property === 'symbol' || property === 'then') return undefined;
      if (property in target) return target[property];
      return function () { return callTool(property); };
    },
  });

  function deepFreeze(value) {
    if (typeof value === 'object' && value !== null) {
      var names = keysOf(value);
      for (var at = 0; at < names.length; at += 1) deepFreeze(value[names[at]]);
      freeze(value);
    }
    return value;
  }

  function finish(value) {
    if (!finished) {
      flushOutput();
      finished = { value: value };
      if (onFinish) onFinish();
    }
    throw exitSignal;
  }

  function log() {
    var line = arguments.length > 0 ? formatValue(arguments[0]) : '';
    for (var at = 1; at < arguments.length; at += 1) line += ' ' + formatValue(arguments[at]);
    write(line + '\n');
  }
  var consoleObject = freeze({ log: log, info: log, debug: log, warn: log, error: log, trace: log });

  var globals = {
    tools: tools,
    ALL_TOOLS: deepFreeze(catalog.map(function (tool) {
      var copy = { name: tool.identifier, toolName: tool.name, description: tool.description, inputSchema: tool.inputSchema };
      if (tool.outputSchema !== undefined) copy.outputSchema = tool.outputSchema;
      return copy;
    })),
    text: function (value) { write(formatValue(value) + '\n'); },
    console: consoleObject,
    exit: finish,
    finish: finish,
  };
  var globalNames = keysOf(globals);
  for (var at = 0; at < globalNames.length; at += 1) {
    define(globalThis, globalNames[at], { value: globals[globalNames[at]], writable: false, enumerable: false, configurable: false });
  }

  function settle(promise) {
    return new PromiseConstructor(function (resolve) {
      var isSettled = false;
      function complete(value) {
        if (isSettled) return;
        isSettled = true;
        flushOutput();
        try {
          var json = typeof value === 'undefined' ? undefined : checkJson(value, "The program's value");
          resolve(typeof json === 'undefined' ? '{"status":"completed"}' : '{"status":"completed","value":' + json + '}');
        } catch (error) {
          resolve(stringify({ status: 'error', error: describeError(error) }));
        }
      }
      function fail(error) {
        if (isSettled) return;
        isSettled = true;
        flushOutput();
        resolve(stringify({ status: 'error', error: describeError(error) }));
      }
      onFinish = function () { complete(finished.value); };
      if (finished) { onFinish(); return; }
      reflectApply(promiseThen, promise, [
        function (value) { complete(finished ? finished.value : value); },
        function (error) { if (finished || error === exitSignal) complete(finished ? finished.value : undefined); else fail(error); },
      ]);
    });
  }

  return freeze({ settle: settle, takeCalls: takeCalls, deliverResults: deliverResults });
})`;

/**
 * What the prelude returns to the engine, never to the program. Each member is a guest function
 * the engine calls:
 * - `settle(programPromise)` resolves to the JSON text of a {@link ProgramCompletion}-like
 *   `{status, value?, error?}` once the program ends (by its value, `exit`/`finish` or a throw);
 * - `takeCalls()` returns the JSON text of the tool calls queued since it was last called, an
 *   array of `{callId, name, input}`, or `undefined` when there are none;
 * - `deliverResults(json)` takes the JSON text of an array of {@link ToolCallResult}s and settles
 *   the calls they answer; results for calls nobody waits on are ignored. It returns how many
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
