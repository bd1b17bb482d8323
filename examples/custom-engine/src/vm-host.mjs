// The host of the node:vm engine. Code mode starts it (node src/vm-host.mjs) inside the sandbox,
// under Node's permission model; it is plain JavaScript because the host runs on plain Node.
import vm from 'node:vm';
import { describeInterrupt, GuestTurnLoop, hostThen, runProcessHost } from '@ghost/code-mode/host';

const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

/** What a guest error says, read defensively: the program made the object. */
function failure(error, limits) {
  try {
    if (error?.code === 'ERR_SCRIPT_EXECUTION_TIMEOUT') {
      return { status: 'error', error: describeInterrupt('cpu', limits) };
    }
    return {
      status: 'error',
      error: `${String(error?.name ?? 'Error')}: ${String(error?.message ?? error)}`,
    };
  } catch {
    return { status: 'error', error: 'The program threw a value that cannot be described.' };
  }
}

/** One guest: a fresh vm context with the guest prelude installed, for one program. */
class VmGuest {
  #limits;
  #context;
  #control;
  #setupError;
  #program;
  #turns;

  constructor(setup) {
    this.#limits = setup.limits;
    // Its own microtask queue, drained (within the timeout) after each evaluation.
    this.#context = vm.createContext({}, { microtaskMode: 'afterEvaluate', codeGeneration: { wasm: false } });
    try {
      const prelude = this.#evaluate(setup.prelude, 'prelude.js');
      this.#control = prelude((text) => this.#program?.write(String(text)), setup.toolsJson);
    } catch (error) {
      this.#setupError = failure(error, this.#limits);
    }
  }

  /** Runs code in the guest; the timeout bounds it and the microtasks it queues (cpuSeconds). */
  #evaluate(source, filename) {
    return vm.runInContext(source, this.#context, { filename, timeout: this.#limits.cpuSeconds * 1000 });
  }

  async run(program) {
    if (this.#setupError) return this.#setupError;
    this.#program = program;
    this.#turns = new GuestTurnLoop(program, this.#limits);
    let hasEnded = false;
    let outcome;
    try {
      const started = this.#evaluate(program.source, 'program.js');
      hostThen(
        started,
        () => (hasEnded = true),
        () => (hasEnded = true),
      );
      hostThen(this.#control.settle(started), (json) => (outcome = JSON.parse(json)));
    } catch (error) {
      return failure(error, this.#limits);
    }
    return this.#turns.run({
      runJobs: async () => {
        this.#evaluate('undefined', 'turn.js'); // runs the jobs queued since the last turn
        await nextTurn();
      },
      takeCalls: () => this.#control.takeCalls(),
      deliverResults: (resultsJson) => this.#control.deliverResults(resultsJson),
      outcome: () => outcome,
      hasProgramEnded: () => hasEnded,
      describeFailure: (error) => failure(error, this.#limits),
    });
  }

  deliverResults(resultsJson) {
    this.#turns?.deliverResults(resultsJson);
  }

  dispose() {
    this.#program = undefined;
    this.#turns?.close();
  }
}

await runProcessHost({ engine: 'node-vm', prepare: async (setup) => new VmGuest(setup) });
