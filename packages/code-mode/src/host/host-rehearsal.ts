import { encodeFrame, FrameDecoder } from '../shared/frame-codec.js';
import type { GuestToolCall, HostFrame, ParentFrame } from '../shared/protocol.js';
import { type EngineDriver, isJavaScript } from './engine-driver.js';
import { type HostTransport, serveProgram } from './host-runtime.js';

/** A program that takes every path a real one takes: output, a tool call, a value. */
const rehearsalSource = 'console.log(await tools.warm({ n: 1 }));\nreturn [1, { ok: true }];';

/**
 * The same, after `calls` more tool calls, one after another, that end early once the loopback
 * answers 0 (the host was asked to hurry).
 */
const warmUpSource = (calls: number) =>
  `for (let index = 0; index < ${calls}; index += 1) if ((await tools.warm({ n: index })) === 0) break;\n${rehearsalSource}`;

/** The options of {@link rehearseProgram}. */
export interface RehearsalOptions {
  /**
   * Tool calls a JavaScript rehearsal makes before its usual one, so that V8 has optimised the
   * host's per-call code (the codec, the turn loop, the driver) before a program's first call
   * rather than during its first few hundred. Default 0.
   */
  readonly warmUpCalls?: number;
  /** Read before each warm-up call is answered: true ends the warm-up at that call. */
  readonly shouldHurry?: () => boolean;
}

/**
 * Runs one small program through the whole host path before the host says `hello`: the protocol
 * handlers, the frame codec, output batching and the driver, on a loopback transport that answers
 * as a parent would. V8 compiles JavaScript lazily, on a function's first call, so without this
 * the first real program would pay for compiling every function it touches (about a millisecond).
 * With `warmUpCalls`, the program first makes that many calls, enough for V8 to optimise the
 * per-call code, which a fresh host's first few hundred calls otherwise run unoptimised
 * (docs/decisions/2026-12-07-round-trip-and-imports.md); `shouldHurry` ends them early.
 * `runProcessHost` rehearses only in a spare, and warms up only until a program waits for it: a
 * host started for a program that is already waiting says `hello` at once.
 *
 * The rehearsal's guest is disposed like any other; a driver decides itself whether the engine
 * state under it may serve the next guest (QuickJS reuses a wasm module only after a program
 * that completed cleanly). Resolves with the number of tool calls the loopback answered.
 */
export async function rehearseProgram(driver: EngineDriver, options: RehearsalOptions = {}): Promise<number> {
  const { warmUpCalls = 0, shouldHurry = () => false } = options;
  const javaScriptSource = warmUpCalls > 0 ? warmUpSource(warmUpCalls) : rehearsalSource;
  const source = driver.rehearsalSource ?? (isJavaScript(driver) ? javaScriptSource : undefined);
  if (source === undefined) return 0; // a language code mode has no rehearsal for
  let answered = 0;
  const decoder = new FrameDecoder();
  let listener: ((frame: unknown) => void) | undefined;
  // Frames cross the real codec, as they would on the wire.
  const deliver = (frame: ParentFrame) => {
    for (const decoded of decoder.push(encodeFrame(frame))) setImmediate(() => listener?.(decoded));
  };
  const transport: HostTransport = {
    send(frame: HostFrame) {
      const [sent] = new FrameDecoder().push(encodeFrame(frame)) as HostFrame[];
      if (sent?.type === 'ready') deliver({ type: 'execute', programId: 'rehearsal', source });
      if (sent?.type === 'tool_calls') {
        answered += sent.calls.length;
        const results = sent.calls.map(({ callId }: GuestToolCall) => ({
          callId,
          ok: true as const,
          value: shouldHurry() ? 0 : 1,
        }));
        deliver({ type: 'tool_results', programId: 'rehearsal', results });
      }
    },
    onFrame(next) {
      listener = next;
    },
  };
  const served = serveProgram(driver, transport);
  deliver({
    type: 'setup',
    tools: [{ name: 'warm', identifier: 'warm', description: '', inputSchema: {} }],
    limits: { outputBytes: 1024, memoryBytes: 16 * 1024 * 1024, cpuSeconds: 10, wallSeconds: 10 },
  });
  await served;
  return answered;
}
