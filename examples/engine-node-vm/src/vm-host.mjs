// The host of the node:vm engine: code mode starts it (node src/vm-host.mjs) in the sandbox, under
// Node's permission model. Plain JavaScript, because the host runs on plain Node. node:vm is NOT a
// security boundary: the sandbox around this process is.
import vm from 'node:vm';
import { formatInterrupt, GuestTurnLoop, hostThen, runProcessHost } from '@ghost/code-mode/host';

const errorCompletion = (error) => ({ status: 'error', error });

/** The completion for an error the guest threw; read defensively, since the program made it. */
function failure(error, limits) {
  try {
    if (error?.code === 'ERR_SCRIPT_EXECUTION_TIMEOUT')
      return errorCompletion(formatInterrupt('cpu', limits));
    return errorCompletion(`${String(error?.name ?? 'Error')}: ${String(error?.message ?? error)}`);
  } catch {
    return errorCompletion('The program threw a value that cannot be described.');
  }
}

/** A fresh context per guest: `prepare` makes one for each program. */
function createVmGuest({ prelude, toolsJson, limits }) {
  // Its own microtask queue, which each evaluation drains within the timeout (cpuSeconds).
  const context = vm.createContext({}, { microtaskMode: 'afterEvaluate', codeGeneration: { wasm: false } });
  const evaluate = (source, filename) =>
    vm.runInContext(source, context, { filename, timeout: limits.cpuSeconds * 1000 });
  let program, turns, control, setupError;
  try {
    control = evaluate(prelude, 'prelude.js')((text) => program?.write(String(text)), toolsJson);
  } catch (error) {
    setupError = failure(error, limits);
  }
  return {
    async run(running) {
      if (setupError) return setupError;
      program = running;
      turns = new GuestTurnLoop(running, limits); // owns stop, wallSeconds, stalls, rejections
      let hasEnded = false;
      let outcome;
      try {
        const started = evaluate(running.source, 'program.js');
        // The host's own then, taken before the program could replace the guest's.
        const ended = () => (hasEnded = true);
        hostThen(started, ended, ended);
        hostThen(control.settle(started), (json) => (outcome = JSON.parse(json)));
      } catch (error) {
        return failure(error, limits);
      }
      return turns.run({
        async runJobs() {
          evaluate('undefined', 'turn.js'); // the microtask pump: runs the jobs queued since
          await new Promise((resolve) => setImmediate(resolve)); // lets results and stops arrive
        },
        takeCalls: () => control.takeCalls(),
        deliverResults: (resultsJson) => control.deliverResults(resultsJson),
        outcome: () => outcome,
        hasProgramEnded: () => hasEnded,
        failureCompletion: (error) => failure(error, limits),
      });
    },
    deliverResults: (resultsJson) => turns?.deliverResults(resultsJson),
    dispose() {
      program = undefined;
      turns?.close();
    },
  };
}

await runProcessHost({ engine: 'node-vm', prepare: async (setup) => createVmGuest(setup) });
