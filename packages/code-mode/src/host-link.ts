import { encodeFrame, FrameDecoder } from './frame-codec.js';
import {
  type GuestToolEntry,
  type HostFrame,
  type HostLimits,
  type ParentFrame,
  parseHostFrame,
  protocolVersion,
} from './protocol.js';
import type { SandboxedCommand, SandboxFactory } from './sandbox-factory.js';

/**
 * The parent's end of one engine host, whatever its placement. A link is used for one program:
 * `ready` resolves once the host has built the guest, then frames flow both ways until the host
 * sends `done` or is lost.
 */
export interface HostLink {
  /** Resolves when the host is ready for `execute`; rejects when it failed to start. */
  readonly ready: Promise<void>;
  /** Resolves, once, with a description of how the host was lost (exit, crash, broken protocol). */
  readonly lost: Promise<string>;
  send(frame: ParentFrame): void;
  /** Registers the listener for host frames after the handshake. */
  onFrame(listener: (frame: HostFrame) => void): void;
  /** Ends the program at once: kills a process, stops a thread's program. */
  terminate(): void;
  /** Releases the host and everything it owns. Rejects with a `CleanupError` when it cannot. */
  close(): Promise<void>;
}

/** What starts hosts for a session. */
export type HostLauncher = () => HostLink;

/** What a process host is set up with. */
export interface ProcessHostOptions {
  readonly sandbox: SandboxFactory;
  readonly command: SandboxedCommand;
  readonly engine: string;
  readonly tools: readonly GuestToolEntry[];
  readonly limits: HostLimits;
}

/** How a lost host is reported: its exit and how much stderr it wrote, never the text (it may hold secrets). */
function describeExit(code: number | null, signal: NodeJS.Signals | null, stderrBytes: number): string {
  const how = signal ? `signal=${signal}` : `exit_status=${code}`;
  return `The engine host process ended unexpectedly (${how}, stderr_bytes=${stderrBytes}).`;
}

/**
 * Starts a host process through the sandbox and speaks the protocol on its fd 3: expects `hello`
 * with our protocol version, sends `setup`, waits for `ready`. Anything else, a frame over the
 * cap, or the process ending, loses the host.
 */
export function launchProcessHost(options: ProcessHostOptions): HostLink {
  let listener: ((frame: HostFrame) => void) | undefined;
  let stage: 'hello' | 'ready' | 'running' = 'hello';
  let reportLost: (reason: string) => void = () => {};
  const lost = new Promise<string>((resolve) => {
    reportLost = resolve;
  });
  let isLost = false;
  const loseHost = (reason: string) => {
    if (isLost) return;
    isLost = true;
    reportLost(reason);
  };
  let markReady: () => void = () => {};
  let failReady: (error: Error) => void = () => {};
  const ready = new Promise<void>((resolve, reject) => {
    markReady = resolve;
    failReady = reject;
  });
  ready.catch(() => {}); // a spare that fails before anyone asks for it must not be an unhandled rejection

  const starting = options.sandbox.spawn(options.command);
  starting.then(
    (child) => {
      const decoder = new FrameDecoder();
      const breakProtocol = (message: string) => {
        const reason = `The engine host broke the protocol: ${message}`;
        failReady(new Error(reason));
        loseHost(reason);
        child.kill();
      };
      child.channel.on('data', (chunk: Buffer) => {
        if (isLost) return;
        let frames: HostFrame[];
        try {
          frames = decoder.push(chunk).map(parseHostFrame);
        } catch (error) {
          breakProtocol((error as Error).message);
          return;
        }
        for (const frame of frames) {
          if (isLost) return;
          if (stage === 'hello') {
            if (frame.type !== 'hello' || frame.protocol !== protocolVersion) {
              breakProtocol(
                `expected hello with protocol ${protocolVersion}, got ${JSON.stringify(frame).slice(0, 200)}`,
              );
              return;
            }
            stage = 'ready';
            child.channel.write(encodeFrame({ type: 'setup', tools: options.tools, limits: options.limits }));
          } else if (stage === 'ready') {
            if (frame.type !== 'ready') {
              breakProtocol(`expected ready, got '${frame.type}'`);
              return;
            }
            stage = 'running';
            markReady();
          } else {
            listener?.(frame);
          }
        }
      });
      child.channel.on('error', () => {});
      void child.exited.then((exit) => {
        const reason = describeExit(exit.code, exit.signal, child.stderr.bytesSeen);
        failReady(new Error(reason));
        loseHost(reason);
      });
    },
    (error: unknown) => {
      failReady(error instanceof Error ? error : new Error(String(error)));
      loseHost(`The engine host could not start: ${(error as Error).message}`);
    },
  );

  return {
    ready,
    lost,
    send(frame) {
      void starting.then((child) => {
        if (!isLost) child.channel.write(encodeFrame(frame));
      });
    },
    onFrame(next) {
      listener = next;
    },
    terminate() {
      void starting.then(
        (child) => child.kill('SIGKILL'),
        () => {},
      );
    },
    async close() {
      let child: Awaited<typeof starting>;
      try {
        child = await starting;
      } catch {
        return; // never started: nothing to release
      }
      await child.close();
    },
  };
}
