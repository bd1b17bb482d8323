import {
  type EngineDriver,
  type GuestSetup,
  guestPrelude,
  type HostLimits,
  type HostProgram,
  type PreparedGuest,
  type ProgramCompletion,
  wrapProgram,
} from '@ghost/code-mode/host';
import variant from '@jitl/quickjs-wasmfile-release-sync';
import {
  newQuickJSWASMModuleFromVariant,
  type QuickJSContext,
  type QuickJSDeferredPromise,
  type QuickJSHandle,
  type QuickJSRuntime,
  type QuickJSSyncVariant,
  type QuickJSWASMModule,
} from 'quickjs-emscripten-core';

// The variant's types describe its CommonJS build; under ESM the default import is the variant.
const releaseVariant = variant as unknown as QuickJSSyncVariant;

/** QuickJS turns a deeper guest stack into a catchable `InternalError` at 256 KiB (feasibility §3). */
const maxStackBytes = 256 * 1024;

/** Why the interrupt handler stopped a program. */
type InterruptReason = 'stop' | 'memory' | 'cpu' | 'wall';

function describeInterrupt(reason: InterruptReason, limits: HostLimits): string {
  switch (reason) {
    case 'stop':
      return 'The program was stopped.';
    case 'memory':
      return `The program used more than its memory limit of ${limits.memoryBytes} bytes and was stopped.`;
    case 'cpu':
      return `The program used more than its CPU limit of ${limits.cpuSeconds} s and was stopped.`;
    case 'wall':
      return `The program ran longer than its time limit of ${limits.wallSeconds} s and was stopped.`;
  }
}

function heapBytes(module: QuickJSWASMModule): number {
  return (module.getFFI() as unknown as { module: { HEAPU8: Uint8Array } }).module.HEAPU8.length;
}

/** A program that touches every path a real one takes, so the wasm code is compiled before it is needed. */
const warmUpSetup = (prelude: string): GuestSetup => ({
  prelude,
  toolsJson: JSON.stringify([{ name: 'warm', identifier: 'warm', description: '', inputSchema: {} }]),
  limits: { outputBytes: 1024, memoryBytes: 16 * 1024 * 1024, cpuSeconds: 10, wallSeconds: 10 },
});
/**
 * How many tool calls the first warm-up makes. V8 first runs wasm with its baseline compiler and
 * re-compiles hot functions with the optimising one; a few hundred calls get the interpreter's
 * hot paths optimised before the first program, which makes each guest tool call about twice as
 * fast. Later modules in the same process share that code, so they need only a short warm-up.
 */
const firstWarmUpCalls = 500;

function warmUpProgram(calls: number): HostProgram {
  return {
    programId: 'warm-up',
    source: wrapProgram(
      `for (let i = 0; i < ${calls}; i++) { const value = await tools.warm({ n: i }); console.log(value, JSON.stringify({ a: [i] })); }\nreturn [1, { ok: true }];`,
    ),
    callTool: async () => '{"ok":true}',
    write: () => {},
    isStopRequested: false,
  };
}

/**
 * The QuickJS driver. The wasm module is loaded and warmed up as soon as the host starts, and
 * each guest gets a fresh runtime and context, built before its program arrives. A module whose
 * program hit an error or a limit is never used again (a process host runs one program and exits;
 * a thread host loads a fresh module for the next program).
 */
export function createQuickJSDriver(): EngineDriver {
  let loading: Promise<QuickJSWASMModule> | undefined = loadWarmModule(firstWarmUpCalls);
  return {
    engine: 'quickjs',
    async prepare(setup) {
      // Loaded at start for the first guest; a later guest (a thread host) loads its own when it
      // asks, never while a program runs, so loading never competes with a program for the CPU.
      const module = await (loading ?? loadWarmModule(1));
      loading = undefined;
      return GuestSession.create(module, setup);
    },
  };
}

async function loadWarmModule(calls: number): Promise<QuickJSWASMModule> {
  const module = await newQuickJSWASMModuleFromVariant(releaseVariant);
  const guest = GuestSession.create(module, warmUpSetup(guestPrelude));
  try {
    await guest.run(warmUpProgram(calls));
  } finally {
    guest.dispose();
  }
  return module;
}

/** One guest: a QuickJS runtime and context with the prelude installed, for one program. */
class GuestSession implements PreparedGuest {
  readonly #module: QuickJSWASMModule;
  readonly #runtime: QuickJSRuntime;
  readonly #context: QuickJSContext;
  readonly #limits: HostLimits;
  readonly #pending = new Set<QuickJSDeferredPromise>();
  readonly #handles: QuickJSHandle[] = [];
  #settle: QuickJSHandle | undefined;
  #setupError: ProgramCompletion | undefined;
  #program: HostProgram | undefined;
  #interrupted: InterruptReason | undefined;
  #isDisposed = false;
  #wake: (() => void) | undefined;

  static create(module: QuickJSWASMModule, setup: GuestSetup): GuestSession {
    return new GuestSession(module, setup);
  }

  private constructor(module: QuickJSWASMModule, setup: GuestSetup) {
    this.#module = module;
    this.#limits = setup.limits;
    this.#runtime = module.newRuntime();
    this.#runtime.setMaxStackSize(maxStackBytes);
    // QuickJS counts allocations, not bytes, in the wasm build: this catches single huge
    // allocations; the heap-size poll in the interrupt handler bounds the rest.
    this.#runtime.setMemoryLimit(setup.limits.memoryBytes);
    this.#context = this.#runtime.newContext();
    const context = this.#context;
    const bridge = this.#keep(context.newFunction('bridge', (op, payload) => this.#bridge(op, payload)));
    const prelude = this.#evaluate(setup.prelude, 'prelude.js');
    if ('error' in prelude) {
      this.#setupError = prelude.error;
      return;
    }
    const tools = this.#keep(context.newString(setup.toolsJson));
    const settle = context.callFunction(prelude.value, context.undefined, bridge, tools);
    if (settle.error) this.#setupError = this.#failure(settle.error);
    else this.#settle = this.#keep(settle.value);
  }

  async run(program: HostProgram): Promise<ProgramCompletion> {
    if (this.#setupError) return this.#setupError;
    this.#program = program;
    this.#watchLimits(program);
    const completion = await this.#runProgram(program);
    const reason = this.#interrupted;
    return reason === undefined
      ? completion
      : { status: 'error', error: describeInterrupt(reason, this.#limits) };
  }

  #watchLimits(program: HostProgram): void {
    const module = this.#module;
    const limits = this.#limits;
    const heapAtStart = heapBytes(module);
    // In a worker thread this is the whole process's CPU time, so a thread program is stopped
    // at the limit or earlier, never later.
    const cpuAtStart = process.cpuUsage();
    const wallDeadline = Date.now() + limits.wallSeconds * 1000;
    const check = (): InterruptReason | undefined => {
      if (program.isStopRequested) return 'stop';
      if (heapBytes(module) - heapAtStart > limits.memoryBytes) return 'memory';
      const cpu = process.cpuUsage(cpuAtStart);
      if ((cpu.user + cpu.system) / 1e6 > limits.cpuSeconds) return 'cpu';
      if (Date.now() > wallDeadline) return 'wall';
      return undefined;
    };
    this.#runtime.setInterruptHandler(() => {
      this.#interrupted ??= check();
      return this.#interrupted !== undefined;
    });
  }

  async #runProgram(program: HostProgram): Promise<ProgramCompletion> {
    const context = this.#context;
    const started = this.#evaluate(program.source, 'program.js');
    if ('error' in started) return started.error;
    const settled = context.callFunction(this.#settle as QuickJSHandle, context.undefined, started.value);
    if (settled.error) return this.#failure(settled.error);
    this.#keep(settled.value);
    let outcome: ProgramCompletion | undefined;
    void context.resolvePromise(settled.value).then((result) => {
      if (this.#isDisposed) return;
      if (result.error) {
        outcome = this.#failure(result.error);
      } else {
        outcome = JSON.parse(context.getString(result.value)) as ProgramCompletion;
        result.value.dispose();
      }
      this.#wake?.();
    });
    for (;;) {
      const jobs = this.#runtime.executePendingJobs();
      if (jobs.error) jobs.error.dispose();
      if (this.#interrupted !== undefined) return { status: 'error', error: 'interrupted' };
      if (outcome) return outcome;
      // Nothing can run until a tool result, or the resolution above, wakes the loop.
      await new Promise<void>((wake) => {
        this.#wake = wake;
      });
      this.#wake = undefined;
    }
  }

  #bridge(opHandle: QuickJSHandle, payloadHandle: QuickJSHandle): QuickJSHandle | undefined {
    const context = this.#context;
    const program = this.#program;
    const op = context.getString(opHandle);
    const payload = context.getString(payloadHandle);
    if (program === undefined) return undefined;
    if (op === 'write') {
      program.write(payload);
      return undefined;
    }
    const deferred = context.newPromise();
    this.#pending.add(deferred);
    program.callTool(payload).then(
      (json) => this.#resolveCall(deferred, () => context.newString(json), 'resolve'),
      (error: Error) => this.#resolveCall(deferred, () => context.newError(error.message), 'reject'),
    );
    return deferred.handle;
  }

  #resolveCall(deferred: QuickJSDeferredPromise, make: () => QuickJSHandle, how: 'resolve' | 'reject'): void {
    if (this.#isDisposed || !this.#pending.has(deferred)) return;
    this.#pending.delete(deferred);
    const handle = make();
    deferred[how](handle);
    handle.dispose();
    deferred.dispose();
    this.#wake?.();
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
    for (const deferred of this.#pending) deferred.dispose();
    this.#pending.clear();
    for (const handle of this.#handles.reverse()) if (handle.alive) handle.dispose();
    try {
      this.#context.dispose();
      this.#runtime.dispose();
    } catch {
      // A runtime left inconsistent by a limit hit can fail to free; its module is never reused.
    }
  }
}
