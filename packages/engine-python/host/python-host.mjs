// The host of the Python engine: code mode starts it (node host/python-host.mjs [snapshot]) in the
// sandbox, under Node's permission model. One Pyodide interpreter per host, loaded (from the
// memory snapshot the engine's prepare made, when there is one) and warmed up before the host says
// hello; the host serves one program (the 'process' placement) and exits.
import { readFileSync } from 'node:fs';
import { formatInterrupt, formatStall, GuestTurnLoop, runProcessHost } from '@ghost/code-mode/host';
import { installPrelude, loadPyodideQuietly, snapshotPayload } from './load-pyodide.mjs';

const snapshotPath = process.argv.slice(2).find((argument) => !argument.startsWith('--'));

/** Why the watchdog stopped the running program, and what it checks; undefined between programs. */
const watchdog = { isArmed: false, reason: undefined, check: undefined, countdown: 0 };

// Pyodide reads its interrupt "buffer" (slot 0) every few bytecodes. A getter instead of a
// SharedArrayBuffer lets this single-threaded host check the limits itself, with no worker: a
// value of 2 (SIGINT) makes Python raise KeyboardInterrupt where it is.
const interruptSource = Object.freeze(
  Object.create(null, {
    0: {
      get() {
        if (!watchdog.isArmed || watchdog.check === undefined) return 0;
        if (watchdog.reason !== undefined) return 2;
        watchdog.countdown -= 1;
        if (watchdog.countdown > 0) return 0;
        watchdog.countdown = 256;
        watchdog.reason = watchdog.check();
        return watchdog.reason === undefined ? 0 : 2;
      },
      set() {},
    },
  }),
);

const output = { write: undefined, decoder: new TextDecoder() };
const writeOutput = (bytes) => {
  output.write?.(output.decoder.decode(bytes, { stream: true }));
  return bytes.length;
};

/** The snapshot in the engine's file, or undefined when it is gone or damaged since it was checked. */
function readSnapshot(path) {
  try {
    return snapshotPayload(readFileSync(path));
  } catch {
    return undefined;
  }
}

/**
 * Pyodide with the prelude module, from the snapshot when the engine made one (it holds the
 * prelude already), else loaded afresh. A snapshot that does not load is passed over.
 */
async function loadInterpreter() {
  const snapshot = snapshotPath === undefined ? undefined : readSnapshot(snapshotPath);
  if (snapshot !== undefined) {
    try {
      const loaded = await loadPyodideQuietly({ snapshot });
      return { pyodide: loaded, prelude: loaded.pyimport('_ghost_prelude') };
    } catch {
      // Loaded afresh below.
    }
  }
  const loaded = await loadPyodideQuietly({});
  return { pyodide: loaded, prelude: installPrelude(loaded) };
}

const { pyodide, prelude } = await loadInterpreter();
// The `pyodide_js` module would hand a program Pyodide's own JavaScript API.
pyodide.unregisterJsModule('pyodide_js');
pyodide.setStdout({ write: writeOutput });
pyodide.setStderr({ write: writeOutput });
// Run in this process too: WebAssembly compiles each function at its first call.
prelude.warm_up();
prelude.contain();
const ProgramClass = prelude.Program;
const flushProgramOutput = prelude._flush_output;
pyodide.setInterruptBuffer(interruptSource);

/** Stops interrupting Python, so that it can flush what the stopped program printed before. */
function disarmAndFlush() {
  if (!watchdog.isArmed) return;
  watchdog.isArmed = false;
  try {
    flushProgramOutput();
  } catch {
    // Output that cannot be flushed is lost with the program.
  }
}

/** The completion for an error a turn threw: the watchdog's reason, or the engine failing. */
function failure(error, limits) {
  if (watchdog.reason !== undefined) {
    disarmAndFlush();
    return { status: 'error', error: formatInterrupt(watchdog.reason, limits) };
  }
  // CPython counts its own frames, but a builtin recursing in C (json.dumps of a value nested
  // 100,000 deep) runs the host's stack out first: the program recursed too deeply, and says so.
  if (error instanceof RangeError && /call stack/i.test(error.message))
    return {
      status: 'error',
      error: `RecursionError: maximum recursion depth exceeded (the interpreter's host ran out of stack: ${error.message})`,
    };
  throw error;
}

/** Starts checking stop, CPU, wall and memory for one program, from Python's interrupt polls. */
function watch(program, limits) {
  const cpuAtStart = process.cpuUsage();
  const wallDeadline = Date.now() + limits.wallSeconds * 1000;
  const heapAtStart = pyodide._module.HEAP8.buffer.byteLength;
  watchdog.reason = undefined;
  watchdog.isArmed = true;
  watchdog.countdown = 256;
  watchdog.check = () => {
    if (program.isStopRequested) return 'stop';
    if (pyodide._module.HEAP8.buffer.byteLength - heapAtStart > limits.memoryBytes) return 'memory';
    const cpu = process.cpuUsage(cpuAtStart);
    if ((cpu.user + cpu.system) / 1e6 > limits.cpuSeconds) return 'cpu';
    if (Date.now() > wallDeadline) return 'wall';
    return undefined;
  };
}

/** Runs the loop's ready callbacks; with none ready but a timer set (asyncio.sleep), waits for it. */
async function runJobs(loop) {
  if (!loop.has_ready()) {
    const delay = loop.next_timer_ms();
    if (delay > 0) await new Promise((resolve) => setTimeout(resolve, Math.min(delay, 10)));
  }
  loop.run_ready();
  await new Promise((resolve) => setImmediate(resolve)); // lets results and stops arrive
}

/**
 * The completion once the program has ended. Describing its error or value runs the program's
 * code (`__str__`, `__repr__`), which may throw: then the outcome cannot be read.
 */
function readOutcome(state) {
  let json;
  try {
    json = state.outcome();
  } catch (error) {
    if (watchdog.reason !== undefined) throw error;
    return { status: 'error', error: formatStall(true) };
  }
  return json === undefined ? undefined : JSON.parse(json);
}

function createPythonGuest({ toolsJson, limits }) {
  const state = ProgramClass(toolsJson);
  const loop = state.loop; // read once: each attribute read crosses into Python
  let turns;
  return {
    run(program) {
      output.write = (text) => program.write(text);
      output.decoder = new TextDecoder();
      watch(program, limits);
      turns = new GuestTurnLoop(program, limits);
      try {
        state.start(program.source);
      } catch (error) {
        return Promise.resolve(failure(error, limits));
      }
      return turns.run({
        runJobs: () => runJobs(loop),
        hasPendingJobs: () => loop.has_ready() || loop.next_timer_ms() >= 0,
        takeCalls: () => state.take_calls() ?? undefined,
        deliverResults: (resultsJson) => state.deliver_results(resultsJson),
        outcome: () => readOutcome(state),
        hasProgramEnded: () => state.has_ended(),
        interruptReason: () => {
          if (watchdog.reason !== undefined) disarmAndFlush();
          return watchdog.reason;
        },
        failureCompletion: (error) => failure(error, limits),
      });
    },
    deliverResults: (resultsJson) => turns?.deliverResults(resultsJson),
    dispose() {
      watchdog.isArmed = false;
      watchdog.check = undefined;
      output.write = undefined;
      turns?.close();
    },
  };
}

// What a spare host runs before its hello, through the whole host path: output, a call, a value.
const rehearsalSource = "print(await tools.warm(n=1))\n[1, {'ok': True}]";

await runProcessHost({
  engine: 'python',
  language: 'python',
  rehearsalSource,
  prepare: async (setup) => createPythonGuest(setup),
});
