import {
  type EngineDriver,
  formatInterrupt,
  type GuestSetup,
  GuestTurnLoop,
  type HostLimits,
  type HostProgram,
  type InterruptReason,
  type PreparedGuest,
  type ProgramCompletion,
} from '@ghost/code-mode/host';
import variant from '@jitl/quickjs-wasmfile-release-sync';
import {
  newQuickJSWASMModuleFromVariant,
  newVariant,
  type QuickJSContext,
  type QuickJSHandle,
  type QuickJSRuntime,
  type QuickJSSyncVariant,
  type QuickJSWASMModule,
} from 'quickjs-emscripten-core';

// The variant's types describe its CommonJS build; under ESM the default import is the variant.
const releaseVariant = variant as unknown as QuickJSSyncVariant;

/** QuickJS turns a deeper guest stack into a catchable `InternalError` at 256 KiB. */
const maxStackBytes = 256 * 1024;

function heapBytes(module: QuickJSWASMModule): number {
  return (module.getFFI() as unknown as { module: { HEAPU8: Uint8Array } }).module.HEAPU8.length;
}

/** A compiled wasm module: code that every instance made from it shares. */
interface CompiledWasm {
  readonly __compiledWasm?: never;
}
// Node has WebAssembly; the ES2023 library this repository compiles against does not declare it.
declare const WebAssembly: { compile(bytes: Uint8Array): Promise<CompiledWasm> };

/**
 * The QuickJS driver. Each guest gets a fresh runtime and context, built before its program
 * arrives. A wasm instance (its memory, its heap) serves the next guest only if every program it
 * ran completed: a module whose program hit an error or a limit is never used again, and the next
 * guest gets a fresh instance of the same compiled code.
 *
 * The driver compiles `wasm` (QuickJS's wasm, see `readQuickJSWasm`) once and instantiates its
 * first module as soon as it is created, so a process host's rehearsal (see `runProcessHost` in
 * `@ghost/code-mode/host`) runs on that module and hands it back clean for the real program; a
 * worker thread, which serves many programs, keeps what V8 optimised in one program for the next.
 */
export function createQuickJSDriver(wasm: Promise<Uint8Array>): EngineDriver {
  const compiled = wasm.then((bytes) => WebAssembly.compile(bytes));
  let idle: Promise<QuickJSWASMModule> | undefined = loadModule(compiled);
  return {
    engine: 'quickjs',
    async prepare(setup) {
      // A fresh module is loaded when a guest asks, never while a program runs, so loading never
      // competes with a program for the CPU.
      const module = await (idle ?? loadModule(compiled));
      idle = undefined;
      return GuestSession.create(module, setup, () => {
        idle = Promise.resolve(module);
      });
    },
  };
}

function loadModule(compiled: Promise<CompiledWasm>): Promise<QuickJSWASMModule> {
  // Emscripten passes the enumerable properties of `emscriptenModule` on to its Module object,
  // which reads `printErr`; the option's type does not list it.
  const emscriptenModule = { printErr: reportWasmError } as NonNullable<
    Parameters<typeof newVariant>[1]['emscriptenModule']
  >;
  return newQuickJSWASMModuleFromVariant(
    newVariant(releaseVariant, { wasmModule: compiled, emscriptenModule }),
  );
}

/**
 * QuickJS cannot free a runtime whose promise jobs ran its garbage collector: `JS_FreeRuntime`
 * fails an assertion and the wasm instance aborts, printing this line (an upstream bug, see
 * docs/decisions/2026-12-05-quickjs-runtime-free-abort.md). The driver then drops that instance
 * (see `GuestSession.dispose`), so the line is expected and not written to the user's stderr.
 */
const runtimeFreeAbort = 'Assertion failed: list_empty(&rt->gc_obj_list)';

function reportWasmError(text: string): void {
  if (!text.includes(runtimeFreeAbort)) console.error(text);
}

/** The prelude's control functions (`GuestControl`), held by the engine only. */
interface ControlHandles {
  readonly settle: QuickJSHandle;
  readonly takeCalls: QuickJSHandle;
  readonly deliverResults: QuickJSHandle;
}

/** One guest: a QuickJS runtime and context with the prelude installed, for one program. */
class GuestSession implements PreparedGuest {
  readonly #module: QuickJSWASMModule;
  readonly #runtime: QuickJSRuntime;
  readonly #context: QuickJSContext;
  readonly #limits: HostLimits;
  readonly #handles: QuickJSHandle[] = [];
  /** The running program's turns; results wait there for its next turn. */
  #turns: GuestTurnLoop | undefined;
  #control: ControlHandles | undefined;
  #setupError: ProgramCompletion | undefined;
  #program: HostProgram | undefined;
  #interrupted: InterruptReason | undefined;
  /** Why the running program must stop now, if it must; set when the program starts. */
  #checkLimits: (() => InterruptReason | undefined) | undefined;
  #isDisposed = false;
  /** Set once the program completed with no error or limit hit: the module may serve again. */
  #isClean = false;
  readonly #returnModule: () => void;

  static create(module: QuickJSWASMModule, setup: GuestSetup, returnModule: () => void): GuestSession {
    return new GuestSession(module, setup, returnModule);
  }

  private constructor(module: QuickJSWASMModule, setup: GuestSetup, returnModule: () => void) {
    this.#module = module;
    this.#returnModule = returnModule;
    this.#limits = setup.limits;
    this.#runtime = module.newRuntime();
    this.#runtime.setMaxStackSize(maxStackBytes);
    // QuickJS counts allocations, not bytes, in the wasm build: this catches single huge
    // allocations; the heap-size poll in the interrupt handler bounds the rest.
    this.#runtime.setMemoryLimit(setup.limits.memoryBytes);
    this.#context = this.#runtime.newContext();
    // Installed while the guest is built, so starting the program costs no call into the runtime.
    this.#runtime.setInterruptHandler(() => {
      this.#interrupted ??= this.#checkLimits?.();
      return this.#interrupted !== undefined;
    });
    const context = this.#context;
    const write = this.#keep(context.newFunction('write', (text) => this.#write(text)));
    const prelude = this.#evaluate(setup.prelude, 'prelude.js');
    if ('error' in prelude) {
      this.#setupError = prelude.error;
      return;
    }
    const tools = this.#keep(context.newString(setup.toolsJson));
    const control = context.callFunction(prelude.value, context.undefined, write, tools);
    if (control.error) {
      this.#setupError = this.#failure(control.error);
      return;
    }
    const controlObject = this.#keep(control.value);
    this.#control = {
      settle: this.#keep(context.getProp(controlObject, 'settle')),
      takeCalls: this.#keep(context.getProp(controlObject, 'takeCalls')),
      deliverResults: this.#keep(context.getProp(controlObject, 'deliverResults')),
    };
  }

  deliverResults(resultsJson: string): void {
    if (this.#isDisposed) return;
    this.#turns?.deliverResults(resultsJson);
  }

  async run(program: HostProgram): Promise<ProgramCompletion> {
    if (this.#setupError) return this.#setupError;
    this.#program = program;
    this.#watchLimits(program);
    const completion = await this.#runProgram(program);
    const reason = this.#interrupted;
    if (reason !== undefined) return { status: 'error', error: formatInterrupt(reason, this.#limits) };
    this.#isClean = completion.status === 'completed';
    return completion;
  }

  #watchLimits(program: HostProgram): void {
    const module = this.#module;
    const limits = this.#limits;
    const heapAtStart = heapBytes(module);
    // In a worker thread this is the whole process's CPU time, so a thread program is stopped
    // at the limit or earlier, never later.
    const cpuAtStart = process.cpuUsage();
    const wallDeadline = Date.now() + limits.wallSeconds * 1000;
    this.#checkLimits = (): InterruptReason | undefined => {
      if (program.isStopRequested) return 'stop';
      if (heapBytes(module) - heapAtStart > limits.memoryBytes) return 'memory';
      const cpu = process.cpuUsage(cpuAtStart);
      if ((cpu.user + cpu.system) / 1e6 > limits.cpuSeconds) return 'cpu';
      if (Date.now() > wallDeadline) return 'wall';
      return undefined;
    };
  }

  /** Runs the program in code mode's turn loop: each turn runs the runtime's pending jobs. */
  #runProgram(program: HostProgram): Promise<ProgramCompletion> | ProgramCompletion {
    const context = this.#context;
    const control = this.#control as ControlHandles;
    const started = this.#evaluate(program.source, 'program.js');
    if ('error' in started) return started.error;
    const settled = context.callFunction(control.settle, context.undefined, started.value);
    if (settled.error) return this.#failure(settled.error);
    // The prelude's own promise, which never rejects: its state is read after each turn, with no
    // host callbacks to create.
    const completion = this.#keep(settled.value);
    const turns = new GuestTurnLoop(program, this.#limits);
    this.#turns = turns;
    return turns.run({
      deliverResults: (resultsJson) => this.#deliver(resultsJson),
      runJobs: () => {
        const jobs = this.#runtime.executePendingJobs();
        if (jobs.error) jobs.error.dispose();
      },
      hasPendingJobs: () => this.#runtime.hasPendingJob(),
      takeCalls: () => this.#takeCalls(),
      outcome: () => this.#outcome(completion),
      hasProgramEnded: () => this.#isSettled(started.value),
      interruptReason: () => this.#interrupted,
      failureCompletion: (error) => {
        // Anything else is the engine failing, which rejects `run`.
        if (error instanceof GuestFailure) return error.completion;
        throw error;
      },
    });
  }

  /** Hands one batch of results to the prelude, which counts the calls still waiting. */
  #deliver(resultsJson: string): number {
    const context = this.#context;
    const control = this.#control as ControlHandles;
    const results = context.newString(resultsJson);
    const delivered = context.callFunction(control.deliverResults, context.undefined, results);
    results.dispose();
    if (delivered.error) throw new GuestFailure(this.#failure(delivered.error));
    const callsInFlight = context.getNumber(delivered.value);
    delivered.value.dispose();
    return callsInFlight;
  }

  /** The program's completion once `settle` has resolved it, read from the promise's state. */
  #outcome(completion: QuickJSHandle): ProgramCompletion | undefined {
    const state = this.#context.getPromiseState(completion);
    if (state.type === 'pending') return undefined;
    if (state.type === 'rejected') return this.#failure(state.error);
    const text = this.#context.getString(state.value);
    if (state.value !== completion) state.value.dispose();
    return JSON.parse(text) as ProgramCompletion;
  }

  #isSettled(promise: QuickJSHandle): boolean {
    const state = this.#context.getPromiseState(promise);
    if (state.type === 'rejected') state.error.dispose();
    if (state.type === 'fulfilled' && state.value !== promise) state.value.dispose();
    return state.type !== 'pending';
  }

  /** The prelude's queued calls, as JSON text, or undefined when none (or taking them threw). */
  #takeCalls(): string | undefined {
    const context = this.#context;
    const control = this.#control as ControlHandles;
    const taken = context.callFunction(control.takeCalls, context.undefined);
    if (taken.error) {
      taken.error.dispose();
      return undefined;
    }
    const calls = context.typeof(taken.value) === 'string' ? context.getString(taken.value) : undefined;
    taken.value.dispose();
    return calls;
  }

  #write(textHandle: QuickJSHandle): void {
    const program = this.#program;
    if (program !== undefined) program.write(this.#context.getString(textHandle));
  }

  #evaluate(
    source: string,
    filename: string,
  ): { readonly value: QuickJSHandle } | { readonly error: ProgramCompletion } {
    const result = this.#context.evalCode(source, filename);
    if (result.error) return { error: this.#failure(result.error) };
    return { value: this.#keep(result.value) };
  }

  #failure(errorHandle: QuickJSHandle): ProgramCompletion {
    const dumped = this.#context.dump(errorHandle) as unknown;
    errorHandle.dispose();
    if (typeof dumped === 'object' && dumped !== null && 'message' in dumped) {
      const { name, message } = dumped as { name?: unknown; message?: unknown };
      return { status: 'error', error: `${typeof name === 'string' ? name : 'Error'}: ${String(message)}` };
    }
    return { status: 'error', error: `Uncaught ${String(dumped)}` };
  }

  #keep<Handle extends QuickJSHandle>(handle: Handle): Handle {
    this.#handles.push(handle);
    return handle;
  }

  dispose(): void {
    if (this.#isDisposed) return;
    this.#isDisposed = true;
    this.#turns?.close();
    for (const handle of this.#handles.reverse()) if (handle.alive) handle.dispose();
    try {
      this.#context.dispose();
      this.#runtime.dispose();
    } catch {
      // A runtime left inconsistent by a limit hit, or one whose promise jobs ran the garbage
      // collector, fails to free and aborts its wasm instance: the module is never used again.
      return;
    }
    if (this.#isClean) this.#returnModule();
  }
}

/** A turn of the guest failed: the guest's error, already described. */
class GuestFailure extends Error {
  readonly completion: ProgramCompletion;
  constructor(completion: ProgramCompletion) {
    super(completion.error);
    this.completion = completion;
  }
}
