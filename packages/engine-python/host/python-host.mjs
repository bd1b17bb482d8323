// The host of the Python engine: code mode starts it (node host/python-host.mjs [snapshot]) in the
// sandbox, under Node's permission model. One Pyodide interpreter per host, loaded (from the
// memory snapshot the engine's prepare made, when there is one) and warmed up before the host says
// hello; the host serves one program (the 'process' placement) and exits.
import { readFileSync } from 'node:fs';
import { formatInterrupt, GuestTurnLoop, runProcessHost } from '@ghost/code-mode/host';
import { installPrelude, loadPyodideQuietly, snapshotPayload } from './load-pyodide.mjs';

const snapshotPath = process.argv.slice(2).find((argument) => !argument.startsWith('--'));

/** Why the watchdog stopped the running program, and what it checks; undefined between programs. */
const watchdog = { reason: undefined, check: undefined, countdown: 0 };

// Pyodide reads its interrupt "buffer" (slot 0) every few bytecodes. A getter instead of a
// SharedArrayBuffer lets this single-threaded host check the limits itself, with no worker: a
// value of 2 (SIGINT) makes Python raise KeyboardInterrupt where it is.
const interruptSource = Object.freeze(
  Object.create(null, {
    0: {
      get() {
        if (watchdog.reason !== undefined) return 2;
        if (watchdog.check === undefined) return 0;
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

/**
 * Pyodide with the prelude module, from the snapshot when the engine made one (it holds the
 * prelude already), else loaded afresh. A snapshot that does not load is passed over.
 */
async function loadInterpreter() {
  const file = snapshotPath === undefined ? undefined : readFileSync(snapshotPath);
  const snapshot = file === undefined ? undefined : snapshotPayload(file);
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

const started = performance.now();
const { pyodide, prelude } = await loadInterpreter();
// The `pyodide_js` module would hand a program Pyodide's own JavaScript API.
pyodide.unregisterJsModule('pyodide_js');
pyodide.setStdout({ write: writeOutput });
pyodide.setStderr({ write: writeOutput });
// Run in this process too: WebAssembly compiles each function at its first call.
prelude.warm_up();
prelude.contain();
const ProgramClass = prelude.Program;
pyodide.setInterruptBuffer(interruptSource);
if (process.env.GHOST_PYTHON_HOST_TIMING === '1')
  process.stderr.write(`python host ready in ${Math.round(performance.now() - started)} ms\n`);

/** The completion for an error a turn threw: the watchdog's reason, or the engine failing. */
function failure(error, limits) {
  if (watchdog.reason !== undefined)
    return { status: 'error', error: formatInterrupt(watchdog.reason, limits) };
  throw error;
}

/** Starts checking stop, CPU, wall and memory for one program, from Python's interrupt polls. */
function watch(program, limits) {
  const cpuAtStart = process.cpuUsage();
  const wallDeadline = Date.now() + limits.wallSeconds * 1000;
  const heapAtStart = pyodide._module.HEAP8.buffer.byteLength;
  watchdog.reason = undefined;
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
        outcome: () => {
          const json = state.outcome();
          return json === undefined ? undefined : JSON.parse(json);
        },
        hasProgramEnded: () => state.has_ended(),
        interruptReason: () => watchdog.reason,
        failureCompletion: (error) => failure(error, limits),
      });
    },
    deliverResults: (resultsJson) => turns?.deliverResults(resultsJson),
    dispose() {
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
