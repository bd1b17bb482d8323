// The host of the node:vm engine. Code mode starts it (node src/vm-host.mjs) inside the sandbox,
// under Node's permission model; it is plain JavaScript because the host runs on plain Node.
import vm from 'node:vm';
import { describeInterrupt, describeStall, runProcessHost } from '@ghost/code-mode/host';

const hostThen = Promise.prototype.then;
const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

/** What a guest error says, read defensively: the program made the object. */
function failure(error) {
  try {
    if (error?.code === 'ERR_SCRIPT_EXECUTION_TIMEOUT') return undefined;
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
  #deliveries = [];
  #callsInFlight = 0;
  #wake;

  constructor(setup) {
    this.#limits = setup.limits;
    // Its own microtask queue, drained (within the timeout) after each evaluation.
    this.#context = vm.createContext({}, { microtaskMode: 'afterEvaluate', codeGeneration: { wasm: false } });
    try {
      const prelude = this.#evaluate(setup.prelude, 'prelude.js');
      this.#control = prelude((text) => this.#program?.write(String(text)), setup.toolsJson);
    } catch (error) {
      this.#setupError = failure(error);
    }
  }

  /** Runs code in the guest; the timeout bounds it and the microtasks it queues (cpuSeconds). */
  #evaluate(source, filename) {
    return vm.runInContext(source, this.#context, { filename, timeout: this.#limits.cpuSeconds * 1000 });
  }

  deliverResults(resultsJson) {
    if (this.#program === undefined) return;
    this.#deliveries.push(resultsJson);
    this.#wake?.();
  }

  async run(program) {
    if (this.#setupError) return this.#setupError;
    this.#program = program;
    const wallDeadline = Date.now() + this.#limits.wallSeconds * 1000;
    let outcome;
    try {
      const started = this.#evaluate(program.source, 'program.js');
      let hasProgramEnded = false;
      const ended = () => {
        hasProgramEnded = true;
      };
      hostThen.call(started, ended, ended);
      const completion = this.#control.settle(started);
      // The host's own then: the program may have replaced the guest's.
      hostThen.call(completion, (json) => {
        outcome = JSON.parse(json);
      });
      for (;;) {
        this.#evaluate('undefined', 'turn.js'); // runs the jobs queued since the last turn
        await nextTurn();
        if (outcome !== undefined) return outcome;
        if (program.isStopRequested) return this.#interrupted('stop');
        if (Date.now() > wallDeadline) return this.#interrupted('wall');
        const calls = this.#control.takeCalls();
        if (typeof calls === 'string') {
          this.#callsInFlight += JSON.parse(calls).length;
          program.sendCalls(calls);
        }
        if (this.#deliveries.length === 0) {
          if (this.#callsInFlight === 0) return { status: 'error', error: describeStall(hasProgramEnded) };
          await new Promise((wake) => {
            this.#wake = wake;
          });
          this.#wake = undefined;
        }
        for (const resultsJson of this.#deliveries.splice(0)) {
          this.#callsInFlight = this.#control.deliverResults(resultsJson);
        }
      }
    } catch (error) {
      return failure(error) ?? this.#interrupted('cpu');
    }
  }

  #interrupted(reason) {
    return { status: 'error', error: describeInterrupt(reason, this.#limits) };
  }

  dispose() {
    this.#program = undefined;
    this.#deliveries = [];
    this.#wake?.();
  }
}

// A guest promise rejected with no handler (exit() ends a program by throwing) is the guest's
// business; Node would otherwise end the host for it. The host's own rejections still do.
process.on('unhandledRejection', (reason, promise) => {
  if (promise instanceof Promise) throw reason;
});

await runProcessHost({ engine: 'node-vm', prepare: async (setup) => new VmGuest(setup) });
