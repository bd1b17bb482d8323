import { encodeFrame, FrameDecoder } from '../shared/frame-codec.js';
import type { GuestToolCall, HostFrame, ParentFrame } from '../shared/protocol.js';
import { type EngineDriver, isJavaScript } from './engine-driver.js';
import { type HostTransport, serveProgram } from './host-runtime.js';

/** A program that takes every path a real one takes: output, a tool call, a value. */
const rehearsalSource = 'console.log(await tools.warm({ n: 1 }));\nreturn [1, { ok: true }];';

/**
 * Runs one small program through the whole host path before the host says `hello`: the protocol
 * handlers, the frame codec, output batching and the driver, on a loopback transport that answers
 * as a parent would. V8 compiles JavaScript lazily, on a function's first call, so without this
 * the first real program would pay for compiling every function it touches (about a millisecond);
 * the rehearsal is far too short to make V8 optimise anything. `runProcessHost` rehearses only in
 * a spare: a host started for a program that is already waiting says `hello` at once, since the
 * rehearsal would cost that program several times the millisecond it saves.
 *
 * The rehearsal's guest is disposed like any other; a driver decides itself whether the engine
 * state under it may serve the next guest (QuickJS reuses a wasm module only after a program
 * that completed cleanly).
 */
export async function rehearseProgram(driver: EngineDriver): Promise<void> {
  const source = driver.rehearsalSource ?? (isJavaScript(driver) ? rehearsalSource : undefined);
  if (source === undefined) return; // a language code mode has no rehearsal for
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
        const results = sent.calls.map(({ callId }: GuestToolCall) => ({
          callId,
          ok: true as const,
          value: 1,
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
}
