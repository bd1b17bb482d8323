import { Socket } from 'node:net';
import { encodeFrame, FrameDecoder } from '../shared/frame-codec.js';
import { noRehearsalArgument, protocolVersion } from '../shared/protocol.js';
import type { EngineDriver } from './engine-driver.js';
import { rehearseProgram } from './host-rehearsal.js';
import { type HostTransport, serveProgram } from './host-runtime.js';

/**
 * Tool calls a spare host makes on its loopback before it says hello, unless a program is waiting:
 * after about this many a fresh host's round trip matched a session host's
 * (docs/decisions/2026-12-07-round-trip-and-imports.md).
 */
const spareWarmUpCalls = 600;

/** A transport over fd 3 of this process, the protocol descriptor the sandbox hands the host. */
function createDescriptorTransport(fd = 3): HostTransport & { close(): void } {
  const socket = new Socket({ fd, readable: true, writable: true });
  const decoder = new FrameDecoder();
  let listener: ((frame: unknown) => void) | undefined;
  socket.on('data', (chunk: Buffer) => {
    let frames: unknown[];
    try {
      frames = decoder.push(chunk);
    } catch {
      process.exit(70); // a broken parent frame: nothing sensible left to do
    }
    for (const frame of frames) listener?.(frame);
  });
  // The parent closing the channel means the program is over.
  socket.on('end', () => process.exit(0));
  socket.on('error', () => process.exit(0));
  return {
    send: (frame) => {
      socket.write(encodeFrame(frame));
    },
    onFrame: (next) => {
      listener = next;
    },
    close: () => socket.end(),
  };
}

/**
 * The whole life of a process host: rehearse (run one small program through the whole host path,
 * so the first real program does not pay for compiling it), say hello, run one program (or, set
 * up with reuse, programs while they complete), and exit. A host started for a program that is
 * already waiting (with `--ghost-no-rehearsal`) says hello at once.
 * An engine's host script is `runProcessHost(driver)` and nothing else. It never rejects (so a
 * host script may call it with `void`): a failure, even of opening the parent's channel, is written
 * to stderr and ends the host with exit code 70.
 */
export async function runProcessHost(driver: EngineDriver): Promise<void> {
  let transport: ReturnType<typeof createDescriptorTransport> | undefined;
  try {
    transport = createDescriptorTransport();
    if (!process.argv.includes(noRehearsalArgument)) {
      // Before hello the parent sends nothing but `hurry`, once a program waits for this spare.
      let isHurried = false;
      transport.onFrame((frame) => {
        if ((frame as { type?: unknown } | null)?.type === 'hurry') isHurried = true;
      });
      await rehearseProgram(driver, { warmUpCalls: spareWarmUpCalls, shouldHurry: () => isHurried });
    }
    const served = serveProgram(driver, transport);
    transport.send({ type: 'hello', protocol: protocolVersion, engine: driver.engine });
    await served;
  } catch (error) {
    process.stderr.write(`ghost host: ${(error as Error).message}\n`);
    process.exitCode = 70;
  }
  transport?.close();
}
