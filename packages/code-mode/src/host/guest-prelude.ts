/**
 * The guest side of the JavaScript API (DESIGN §3), shared by every JavaScript engine. It is
 * evaluated inside the engine before the program, as an expression giving a function of
 * `(bridge, toolsJson)` that installs the globals and returns the private `settle` function.
 *
 * `bridge(op, payload)` is the engine's only host function and is never put on a global:
 * `bridge('call', json)` returns a Promise of the result's JSON text (or rejects with its error),
 * `bridge('write', text)` appends output. Values cross as JSON text only, parsed and checked here
 * with the `JSON` captured before the program runs, so a program that replaces `JSON` or pollutes
 * prototypes changes nothing the host relies on.
 */
export const guestPrelude = String.raw`(function (bridge, toolsJson) {
  'use strict';
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
  var exitSignal = freeze({});

  function describePath(path) { return path === '' ? 'the top level' : path; }

  function checkJson(value, what) {
    var seen = [];
    function visit(item, path) {
      var kind = typeof item;
      if (kind === 'bigint') throw new TypeError(what + ' is not JSON: a BigInt at ' + describePath(path) + '; convert it with String() or Number().');
      if (kind === 'function') throw new TypeError(what + ' is not JSON: a function at ' + describePath(path) + '.');
      if (kind === 'symbol') throw new TypeError(what + ' is not JSON: a Symbol at ' + describePath(path) + '.');
      if (kind !== 'object' || item === null) return;
      if (typeof item.toJSON === 'function') return;
      if (seen.indexOf(item) !== -1) throw new TypeError(what + ' is not JSON: it refers to itself at ' + describePath(path) + '.');
      seen.push(item);
      if (isArray(item)) {
        for (var at = 0; at < item.length; at += 1) visit(item[at], path + '[' + at + ']');
      } else {
        var names = keysOf(item);
        for (var each = 0; each < names.length; each += 1) {
          var child = item[names[each]];
          if (typeof child !== 'undefined') visit(child, path + '.' + names[each]);
        }
      }
      seen.pop();
    }
    visit(value, '');
    return stringify(value);
  }

  function describeError(error) {
    if (error && typeof error === 'object' && typeof error.message === 'string') {
      var name = typeof error.name === 'string' && error.name !== '' ? error.name : 'Error';
      var where = '';
      var match = typeof error.stack === 'string' ? /program\.js:(\d+)(?::(\d+))?/.exec(error.stack) : null;
      if (match) where = ' (line ' + match[1] + (match[2] ? ', column ' + match[2] : '') + ')';
      return name + ': ' + error.message + where;
    }
    try { return 'Uncaught ' + String(error); } catch (ignored) { return 'Uncaught exception'; }
  }

  function formatValue(value) {
    if (typeof value === 'string') return value;
    if (value instanceof Error) return describeError(value);
    if (typeof value === 'undefined') return 'undefined';
    if (typeof value === 'function') return '[Function ' + (value.name || 'anonymous') + ']';
    if (typeof value === 'bigint') return String(value) + 'n';
    if (typeof value === 'symbol') return String(value);
    try { var json = checkJson(value, 'It'); return typeof json === 'string' ? json : String(value); } catch (ignored) { return String(value); }
  }

  // Once the program has finished (exit, finish), nothing it does afterwards is seen.
  function write(text) { if (!finished) bridge('write', text); }

  function callTool(name, args) {
    if (finished) return Promise.reject(new Error('The program has finished; it makes no more tool calls.'));
    var entry = byName.get(String(name));
    if (!entry) return Promise.reject(new Error("Unknown tool '" + String(name) + "'. Available tools: " + (identifiers.join(', ') || 'none') + '.'));
    var input;
    try {
      input = checkJson(typeof args === 'undefined' ? {} : args, 'The arguments of tools.' + entry.identifier);
    } catch (error) {
      return Promise.reject(error);
    }
    return bridge('call', '{"name":' + stringify(entry.name) + ',"input":' + input + '}').then(
      function (json) { return parse(json); },
      function (error) { throw new Error(error && typeof error.message === 'string' ? error.message : String(error)); }
    );
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
      finished = { value: value };
      if (onFinish) onFinish();
    }
    throw exitSignal;
  }

  function log() {
    var parts = [];
    for (var at = 0; at < arguments.length; at += 1) parts.push(formatValue(arguments[at]));
    write(parts.join(' ') + '\n');
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

  return function settle(promise) {
    return new Promise(function (resolve) {
      var isSettled = false;
      function complete(value) {
        if (isSettled) return;
        isSettled = true;
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
        resolve(stringify({ status: 'error', error: describeError(error) }));
      }
      onFinish = function () { complete(finished.value); };
      if (finished) { onFinish(); return; }
      promise.then(
        function (value) { complete(finished ? finished.value : value); },
        function (error) { if (finished || error === exitSignal) complete(finished ? finished.value : undefined); else fail(error); }
      );
    });
  };
})`;

/** Wraps rewritten program source so it runs as an async function body with its lines unchanged. */
export function wrapProgram(source: string): string {
  return `(async () => {${source}\n})()`;
}
