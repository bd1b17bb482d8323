// Generated from guest-prelude.mjs by scripts/inline-guest-prelude.mjs, which the build runs: edit that file, not this one.

/** The guest prelude's source: an expression whose value is the function `guest-prelude.mjs` exports. */
export const guestPreludeText = `(function installGuestApi(writeOutput, toolsJson) {
  // biome-ignore lint/suspicious/noRedundantUseStrict: the engines evaluate this function as a script, where it is not redundant.
  'use strict';
  const PromiseConstructor = Promise;
  // Captured before the program runs: a program that replaces a builtin breaks only its own use of it.
  const promiseThen = Promise.prototype.then;
  const promiseReject = Promise.reject;
  const dateNow = Date.now;
  const reflectApply = Reflect.apply;
  const MapConstructor = Map;
  const regexpExec = RegExp.prototype.exec;
  const arrayPush = Array.prototype.push;
  const arrayJoin = Array.prototype.join;
  const mapGet = Map.prototype.get;
  const mapSet = Map.prototype.set;
  const mapDelete = Map.prototype.delete;
  const toText = String;
  const parse = JSON.parse;
  const stringify = JSON.stringify;
  const freeze = Object.freeze;
  const define = Object.defineProperty;
  const isArray = Array.isArray;
  const keysOf = Object.keys;
  /** @type {CatalogEntry[]} */
  const catalog = parse(toolsJson);
  /** @type {Map<string, CatalogEntry>} */
  const byName = new Map();
  /** @type {string[]} */
  const identifiers = [];
  for (let index = 0; index < catalog.length; index += 1) {
    const entry = /** @type {CatalogEntry} */ (catalog[index]);
    byName.set(entry.name, entry);
    byName.set(entry.identifier, entry);
    byName.set(\`tools.\${entry.identifier}\`, entry);
    identifiers.push(entry.identifier);
  }
  /** @type {{ value: unknown } | null} */
  let finished = null;
  /** @type {(() => void) | null} */
  let onFinish = null;
  let nextCallId = 1;
  /** @type {Map<string, WaitingCall>} */
  const waitingCalls = new Map();
  let waitingCount = 0;
  /** @type {string[]} */
  let queuedCalls = [];
  const exitSignal = freeze({});
  // Kept as one string, not a list: appending costs no call a program could have replaced.
  let outputText = '';
  let outputSentAt = 0;
  const outputBatchLength = 16384;
  const outputBatchMs = 10;

  /** @param {string} path */
  function formatPath(path) {
    return path === '' ? 'the top level' : path;
  }

  // The deepest a value crossing the membrane may nest (maxValueDepth in shared/protocol.ts).
  // Checked here, before JSON.stringify goes deeper: in an engine compiled to WebAssembly its
  // recursion would overflow the host's own stack first, which no program can catch.
  const maxValueDepth = 256;
  const tooDeepToPrint = \`[a value nested deeper than \${maxValueDepth} levels of arrays and objects]\`;

  /**
   * JSON text of value, checked as JSON.stringify walks it (after each toJSON()), so every
   * problem is named with its path and toJSON() runs once.
   *
   * @param {unknown} value
   * @param {string} what how the message names the value
   * @param {string} tooDeep the message for a value nested deeper than maxValueDepth levels
   * @returns {string}
   */
  function checkJson(value, what, tooDeep) {
    // Made at the first object: most values printed are not objects.
    /** @type {Map<unknown, unknown> | undefined} */
    let holders;
    /** @type {Map<unknown, string> | undefined} */
    let paths;
    /**
     * @param {unknown} holder
     * @param {string} key
     */
    function pathOf(holder, key) {
      const base = paths ? reflectApply(mapGet, paths, [holder]) : undefined;
      if (typeof base !== 'string') return '';
      return isArray(holder) ? \`\${base}[\${key}]\` : \`\${base}.\${key}\`;
    }
    /**
     * @this {unknown} the object or array holding \`item\`, as JSON.stringify calls a replacer
     * @param {string} key
     * @param {unknown} item
     */
    function check(key, item) {
      const kind = typeof item;
      if (kind === 'bigint')
        throw new TypeError(
          \`\${what} is not JSON: a BigInt at \${formatPath(pathOf(this, key))}; convert it with String() or Number().\`,
        );
      if (kind === 'function')
        throw new TypeError(\`\${what} is not JSON: a function at \${formatPath(pathOf(this, key))}.\`);
      if (kind === 'symbol')
        throw new TypeError(\`\${what} is not JSON: a Symbol at \${formatPath(pathOf(this, key))}.\`);
      if (kind === 'object' && item !== null) {
        if (!holders || !paths) {
          holders = new MapConstructor();
          paths = new MapConstructor();
        }
        // The chain of holders up to the top is the item's depth, too.
        let depth = 0;
        for (let holder = this; holder !== undefined; holder = reflectApply(mapGet, holders, [holder])) {
          if (holder === item)
            throw new TypeError(
              \`\${what} is not JSON: it refers to itself at \${formatPath(pathOf(this, key))}.\`,
            );
          depth += 1;
        }
        if (depth > maxValueDepth) throw new TypeError(tooDeep);
        reflectApply(mapSet, holders, [item, this]);
        reflectApply(mapSet, paths, [item, pathOf(this, key)]);
      }
      return item;
    }
    const json = stringify(value, check);
    if (typeof json !== 'string') {
      const reason = typeof value === 'undefined' ? 'it is undefined.' : 'its toJSON() returned undefined.';
      throw new TypeError(\`\${what} is not JSON: \${reason}\`);
    }
    return json;
  }

  /**
   * The program's first line in program.js is the wrapper's and the rewrite's own (see
   * prepareProgramSource), so program.js line n + 1 is the program's line n.
   *
   * @param {unknown} error
   * @returns {string}
   */
  function formatError(error) {
    // Read as the program left them (getters too), never with \`in\`, which a Proxy answers apart.
    const described = /** @type {{ message?: unknown, name?: unknown, stack?: unknown }} */ (error);
    if (error && typeof error === 'object' && typeof described.message === 'string') {
      const name = typeof described.name === 'string' && described.name !== '' ? described.name : 'Error';
      let where = '';
      const stack = described.stack;
      /** @type {RegExpExecArray | null} */
      const match =
        typeof stack === 'string' ? reflectApply(regexpExec, /program\\.js:(\\d+)(?::(\\d+))?/, [stack]) : null;
      const line = match ? +(/** @type {string} */ (match[1])) - 1 : 0;
      if (line >= 1) where = \` (line \${line}\${match?.[2] ? \`, column \${match[2]}\` : ''})\`;
      return \`\${name}: \${described.message}\${where}\`;
    }
    try {
      return \`Uncaught \${toText(error)}\`;
    } catch {
      return 'Uncaught exception';
    }
  }

  /**
   * @param {unknown} value
   * @returns {string}
   */
  function formatValue(value) {
    if (typeof value === 'string') return value;
    if (value instanceof Error) return formatError(value);
    if (typeof value === 'undefined') return 'undefined';
    if (typeof value === 'function') return \`[Function \${value.name || 'anonymous'}]\`;
    if (typeof value === 'bigint') return \`\${toText(value)}n\`;
    if (typeof value === 'number' || typeof value === 'boolean' || value === null) return stringify(value);
    if (typeof value === 'symbol') return toText(value);
    try {
      const json = checkJson(value, 'It', tooDeepToPrint);
      return typeof json === 'string' ? json : toText(value);
    } catch (error) {
      // String() of so deep a value recurses as deeply as JSON.stringify would.
      if (error instanceof TypeError && error.message === tooDeepToPrint) return tooDeepToPrint;
      return toText(value);
    }
  }

  function flushOutput() {
    if (outputText === '') return;
    const text = outputText;
    outputText = '';
    outputSentAt = dateNow();
    writeOutput(text);
  }

  /**
   * Once the program has finished (exit, finish), nothing it does afterwards is seen.
   *
   * @param {string} text
   */
  function write(text) {
    if (finished) return;
    outputText += text;
    if (outputText.length >= outputBatchLength || dateNow() - outputSentAt >= outputBatchMs) flushOutput();
  }

  /**
   * @param {unknown} name
   * @param {unknown} [args]
   * @returns {Promise<unknown>}
   */
  function callTool(name, args) {
    if (finished)
      return reflectApply(promiseReject, PromiseConstructor, [
        new Error('The program has finished; it makes no more tool calls.'),
      ]);
    /** @type {CatalogEntry | undefined} */
    const entry = reflectApply(mapGet, byName, [toText(name)]);
    if (!entry)
      return reflectApply(promiseReject, PromiseConstructor, [
        new Error(
          \`Unknown tool '\${toText(name)}'. Available tools: \${reflectApply(arrayJoin, identifiers, [', ']) || 'none'}.\`,
        ),
      ]);
    /** @type {string} */
    let input;
    try {
      input = checkJson(
        typeof args === 'undefined' ? {} : args,
        \`The arguments of tools.\${entry.identifier}\`,
        \`The arguments of tools.\${entry.identifier} nest deeper than \${maxValueDepth} levels of arrays and objects, more than code mode carries. Pass flatter arguments.\`,
      );
    } catch (error) {
      return reflectApply(promiseReject, PromiseConstructor, [error]);
    }
    const callId = toText(nextCallId);
    nextCallId += 1;
    reflectApply(arrayPush, queuedCalls, [
      \`{"callId":"\${callId}","name":\${stringify(entry.name)},"input":\${input}}\`,
    ]);
    return new PromiseConstructor((resolve, reject) => {
      reflectApply(mapSet, waitingCalls, [callId, { resolve, reject }]);
      waitingCount += 1;
    });
  }

  function takeCalls() {
    // Output written before a call reaches the host before the call.
    flushOutput();
    if (queuedCalls.length === 0) return undefined;
    const calls = \`[\${reflectApply(arrayJoin, queuedCalls, [','])}]\`;
    queuedCalls = [];
    return calls;
  }

  /** @param {string} resultsJson */
  function deliverResults(resultsJson) {
    /** @type {DeliveredResult[]} */
    const results = parse(resultsJson);
    for (let at = 0; at < results.length; at += 1) {
      const result = /** @type {DeliveredResult} */ (results[at]);
      /** @type {WaitingCall | undefined} */
      const waiting = reflectApply(mapGet, waitingCalls, [result.callId]);
      if (!waiting) continue;
      reflectApply(mapDelete, waitingCalls, [result.callId]);
      waitingCount -= 1;
      if (result.ok) waiting.resolve(typeof result.value === 'undefined' ? null : result.value);
      else waiting.reject(new Error(toText(result.error)));
    }
    return waitingCount;
  }

  /** @type {Record<string, (...values: any[]) => Promise<unknown>>} */
  const methods = Object.create(null);
  for (let position = 0; position < catalog.length; position += 1) {
    const tool = /** @type {CatalogEntry} */ (catalog[position]);
    methods[tool.identifier] = (/** @type {unknown} */ args) => callTool(tool.name, args);
  }
  methods.call = (/** @type {unknown} */ name, /** @type {unknown} */ args) => callTool(name, args);
  methods.parallel = (/** @type {unknown[]} */ ...calls) => {
    const list = calls.length === 1 && isArray(calls[0]) ? calls[0] : calls;
    return Promise.all(
      list.map((/** @type {unknown} */ call) => (typeof call === 'function' ? call() : call)),
    );
  };
  freeze(methods);
  const tools = new Proxy(methods, {
    get: (target, property) => {
      if (typeof property === 'symbol' || property === 'then') return undefined;
      if (property in target) return target[property];
      return () => callTool(property);
    },
  });

  /**
   * @template Value
   * @param {Value} value
   * @returns {Value}
   */
  function deepFreeze(value) {
    if (typeof value === 'object' && value !== null) {
      const names = keysOf(value);
      for (let at = 0; at < names.length; at += 1)
        deepFreeze(/** @type {Record<string, unknown>} */ (value)[/** @type {string} */ (names[at])]);
      freeze(value);
    }
    return value;
  }

  /**
   * @param {unknown} [value]
   * @returns {never}
   */
  function finish(value) {
    if (!finished) {
      flushOutput();
      finished = { value };
      if (onFinish) onFinish();
    }
    throw exitSignal;
  }

  /** @param {unknown[]} values */
  function log(...values) {
    let line = values.length > 0 ? formatValue(values[0]) : '';
    for (let at = 1; at < values.length; at += 1) line += \` \${formatValue(values[at])}\`;
    write(\`\${line}\\n\`);
  }
  const consoleObject = freeze({ log, info: log, debug: log, warn: log, error: log, trace: log });

  /** @type {Record<string, unknown>} */
  const globals = {
    tools,
    ALL_TOOLS: deepFreeze(
      catalog.map((tool) => {
        /** @type {Record<string, unknown>} */
        const copy = {
          name: tool.identifier,
          toolName: tool.name,
          description: tool.description,
          inputSchema: tool.inputSchema,
        };
        if (tool.outputSchema !== undefined) copy.outputSchema = tool.outputSchema;
        return copy;
      }),
    ),
    text: (/** @type {unknown} */ value) => {
      write(\`\${formatValue(value)}\\n\`);
    },
    console: consoleObject,
    exit: finish,
    finish,
  };
  const globalNames = keysOf(globals);
  for (let at = 0; at < globalNames.length; at += 1) {
    const name = /** @type {string} */ (globalNames[at]);
    define(globalThis, name, {
      value: globals[name],
      writable: false,
      enumerable: false,
      configurable: false,
    });
  }

  /**
   * @param {Promise<unknown>} promise the program's own promise
   * @returns {Promise<string>}
   */
  function settle(promise) {
    return new PromiseConstructor((resolve) => {
      let isSettled = false;
      /** @param {unknown} value */
      function complete(value) {
        if (isSettled) return;
        isSettled = true;
        flushOutput();
        try {
          const json =
            typeof value === 'undefined'
              ? undefined
              : checkJson(
                  value,
                  "The program's value",
                  \`The program's value nests deeper than \${maxValueDepth} levels of arrays and objects, more than code mode carries. Return a flatter value.\`,
                );
          resolve(
            typeof json === 'undefined' ? '{"status":"completed"}' : \`{"status":"completed","value":\${json}}\`,
          );
        } catch (error) {
          resolve(stringify({ status: 'error', error: formatError(error) }));
        }
      }
      /** @param {unknown} error */
      function fail(error) {
        if (isSettled) return;
        isSettled = true;
        flushOutput();
        resolve(stringify({ status: 'error', error: formatError(error) }));
      }
      onFinish = () => {
        complete(finished?.value);
      };
      if (finished) {
        onFinish();
        return;
      }
      reflectApply(promiseThen, promise, [
        (/** @type {unknown} */ value) => {
          complete(finished ? finished.value : value);
        },
        (/** @type {unknown} */ error) => {
          if (finished || error === exitSignal) complete(finished ? finished.value : undefined);
          else fail(error);
        },
      ]);
    });
  }

  return freeze({ settle, takeCalls, deliverResults });
})`;
