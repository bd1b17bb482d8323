import { createContext, runInContext } from 'node:vm';
import type {
  EngineDriver,
  GuestSetup,
  HostProgram,
  PreparedGuest,
  ProgramCompletion,
} from '../host/engine-driver.js';
import { GuestTurnLoop, hostThen } from '../host/guest-turn-loop.js';
import { formatInterrupt } from '../host/interrupt.js';
import type { HostLimits } from '../shared/protocol.js';

/** The prelude's controls, as the guest returns them. */
interface VmControl {
  settle(started: unknown): Promise<string>;
  takeCalls(): string | undefined;
  deliverResults(resultsJson: string): number;
}

/** The completion for an error the guest threw; read defensively, since the program made it. */
function failure(error: unknown, limits: HostLimits): ProgramCompletion {
  try {
    const thrown = error as { code?: unknown; name?: unknown; message?: unknown } | undefined;
    if (thrown?.code === 'ERR_SCRIPT_EXECUTION_TIMEOUT')
      return { status: 'error', error: formatInterrupt('cpu', limits) };
    return {
      status: 'error',
      error: `${String(thrown?.name ?? 'Error')}: ${String(thrown?.message ?? error)}`,
    };
  } catch {
    return { status: 'error', error: 'The program threw a value that cannot be described.' };
  }
}

/** A guest in a fresh node:vm context, as `examples/engine-node-vm` builds one. */
function createVmGuest({ prelude, toolsJson, limits }: GuestSetup): PreparedGuest {
  const context = createContext({}, { microtaskMode: 'afterEvaluate', codeGeneration: { wasm: false } });
  const evaluate = (source: string, filename: string): unknown =>
    runInContext(source, context, { filename, timeout: limits.cpuSeconds * 1000 });
  let program: HostProgram | undefined;
  let turns: GuestTurnLoop | undefined;
  const install = evaluate(prelude, 'prelude.js') as (
    write: (text: string) => void,
    toolsJson: string,
  ) => VmControl;
  const control = install((text) => program?.write(String(text)), toolsJson);
  return {
    run(running) {
      program = running;
      const loop = new GuestTurnLoop(running, limits);
      turns = loop;
      let hasEnded = false;
      let outcome: ProgramCompletion | undefined;
      try {
        const started = evaluate(running.source, 'program.js');
        const ended = () => {
          hasEnded = true;
        };
        hostThen(started, ended, ended);
        hostThen(control.settle(started), (json) => {
          outcome = JSON.parse(json as string) as ProgramCompletion;
        });
      } catch (error) {
        return Promise.resolve(failure(error, limits));
      }
      return loop.run({
        async runJobs() {
          evaluate('undefined', 'turn.js'); // the microtask pump
          await new Promise((resolve) => setImmediate(resolve));
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

/**
 * A node:vm engine driver for code mode's own tests: a real interpreter with the real prelude,
 * no security boundary. `prepared` counts the guests built, `disposed` those freed.
 */
export function createVmDriver(): EngineDriver & { prepared: number; disposed: number } {
  const driver = {
    engine: 'node-vm',
    prepared: 0,
    disposed: 0,
    async prepare(setup: GuestSetup): Promise<PreparedGuest> {
      driver.prepared += 1;
      const guest = createVmGuest(setup);
      return {
        run: (program) => guest.run(program),
        deliverResults: (resultsJson) => guest.deliverResults(resultsJson),
        dispose: () => {
          driver.disposed += 1;
          guest.dispose();
        },
      };
    },
  };
  return driver;
}
