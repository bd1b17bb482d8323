import type { SandboxExit, SandboxLimits } from '@ghost/core';
import { encodeFrame, FrameDecoder } from './frame-codec.js';
import {
  type GuestToolEntry,
  type HostFrame,
  type HostLimits,
  type HostReuse,
  type ParentFrame,
  parseHostFrame,
  protocolVersion,
  type SetupFrame,
} from './protocol.js';
import type { SandboxedCommand, SandboxFactory } from './sandbox-factory.js';

/**
 * The parent's end of one engine host, whatever its placement. A link is used for one program:
 * `ready` resolves once the host has built the guest, then frames flow both ways until the host
 * sends `done` or is lost. A reusable host (`placement: 'session'`) gives the next program a link
 * of its own with `nextProgram()`.
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
  /**
   * Present on a host set up for reuse. Called once the host sent a completed `done`, it returns
   * the link for the host's next program, whose `ready` resolves when the host has built a fresh
   * guest, or rejects when the host ends instead (its reuse budget was spent).
   */
  nextProgram?(): HostLink;
}

/** What starts hosts for a session. */
export type HostLauncher = (purpose: LaunchPurpose) => HostLink;

/**
 * Why a host is started: as the spare, ahead of the program it will serve, or for a program that
 * is already waiting (no spare was ready). A process host rehearses only as a spare: the rehearsal
 * saves its first program about a millisecond, and costs a waiting program several.
 */
export type LaunchPurpose = 'spare' | 'waiting-program';

/** What a process host is set up with. */
export interface ProcessHostOptions {
  readonly sandbox: SandboxFactory;
  readonly command: SandboxedCommand;
  readonly engine: string;
  readonly tools: readonly GuestToolEntry[];
  readonly limits: HostLimits;
  /** Set up the host to serve further programs after each one that completes. */
  readonly reuse?: HostReuse;
}

/** What the model is told when the sandbox, not the engine, stopped a host at one of its limits. */
const limitMessages: Partial<Record<keyof SandboxLimits, string>> = {
  memoryBytes:
    'The program ran out of memory (limits.memoryBytes): the sandbox killed its host at the memory limit.',
  cpuSeconds:
    'The program used too much CPU time (limits.cpuSeconds): the sandbox killed its host at the CPU limit.',
  fileBytes: 'The program wrote a file past the size limit (limits.fileBytes): the sandbox stopped its host.',
};

/**
 * How a lost host is reported: the limit that ended it when the sandbox can tell, else its exit and
 * how much stderr it wrote, never the text (it may hold secrets).
 */
function describeExit(exit: SandboxExit, stderrBytes: number): string {
  const limit = exit.limitExceeded === undefined ? undefined : limitMessages[exit.limitExceeded];
  if (limit !== undefined) return limit;
  const how = exit.signal ? `signal=${exit.signal}` : `exit_status=${exit.code}`;
  return `The engine host process ended unexpectedly (${how}, stderr_bytes=${stderrBytes}).`;
}

/**
 * The parent's side of the handshake and the link's fate, shared by every placement: expects
 * `hello` with our protocol version, sends `setup`, waits for `ready`, then passes frames on.
 * Anything out of order loses the host.
 */
export class HostLinkState {
  ready: Promise<void>;
  readonly lost: Promise<string>;
  #listener: ((frame: HostFrame) => void) | undefined;
  #stage: 'hello' | 'ready' | 'running' = 'hello';
  #isLost = false;
  #lostReason = '';
  #reportLost: (reason: string) => void = () => {};
  #markReady: () => void = () => {};
  #failReady: (error: Error) => void = () => {};
  readonly #setup: SetupFrame;

  constructor(setup: SetupFrame) {
    this.#setup = setup;
    this.lost = new Promise<string>((resolve) => {
      this.#reportLost = resolve;
    });
    this.ready = this.#expectReady();
  }

  #expectReady(): Promise<void> {
    const ready = new Promise<void>((resolve, reject) => {
      this.#markReady = resolve;
      this.#failReady = reject;
    });
    ready.catch(() => {}); // a spare that fails before anyone asks for it is not an unhandled rejection
    return ready;
  }

  /**
   * After a completed `done` from a reusable host: expect its next `ready`, and hand the frames
   * after it to the next program's listener. Returns the new `ready`.
   */
  awaitNextProgram(): Promise<void> {
    this.#stage = 'ready';
    this.#listener = undefined;
    this.ready = this.#expectReady();
    if (this.#isLost) this.#failReady(new Error(this.#lostReason));
    return this.ready;
  }

  get isLost(): boolean {
    return this.#isLost;
  }

  onFrame(listener: (frame: HostFrame) => void): void {
    this.#listener = listener;
  }

  /** Handles one raw frame; `send` answers the handshake. Returns false once the host is lost. */
  receive(raw: unknown, send: (frame: SetupFrame) => void): boolean {
    if (this.#isLost) return false;
    let frame: HostFrame;
    try {
      frame = parseHostFrame(raw);
    } catch (error) {
      this.breakProtocol((error as Error).message);
      return false;
    }
    if (this.#stage === 'hello') {
      if (frame.type !== 'hello' || frame.protocol !== protocolVersion) {
        this.breakProtocol(
          `expected hello with protocol ${protocolVersion}, got ${JSON.stringify(frame).slice(0, 200)}`,
        );
        return false;
      }
      this.#stage = 'ready';
      send(this.#setup);
    } else if (this.#stage === 'ready') {
      if (frame.type !== 'ready') {
        this.breakProtocol(`expected ready, got '${frame.type}'`);
        return false;
      }
      this.#stage = 'running';
      this.#markReady();
    } else {
      this.#listener?.(frame);
    }
    return true;
  }

  breakProtocol(message: string): void {
    this.lose(`The engine host broke the protocol: ${message}`);
  }

  /** Records, once, that the host is gone. */
  lose(reason: string): void {
    if (this.#isLost) return;
    this.#isLost = true;
    this.#lostReason = reason;
    this.#failReady(new Error(reason));
    this.#reportLost(reason);
  }
}

/**
 * Starts a host process through the sandbox and speaks the protocol on its fd 3. A frame over
 * the cap, a frame out of order, or the process ending loses the host.
 */
export function launchProcessHost(options: ProcessHostOptions): HostLink {
  const { tools, limits, reuse } = options;
  const state = new HostLinkState({ type: 'setup', tools, limits, ...(reuse ? { reuse } : {}) });
  const starting = options.sandbox.spawn(options.command);
  starting.then(
    (child) => {
      const decoder = new FrameDecoder();
      const sendSetup = (frame: SetupFrame) => child.channel.write(encodeFrame(frame));
      child.channel.on('data', (chunk: Buffer) => {
        if (state.isLost) return;
        let frames: unknown[] = [];
        try {
          frames = decoder.push(chunk);
        } catch (error) {
          state.breakProtocol((error as Error).message);
        }
        for (const frame of frames) if (!state.receive(frame, sendSetup)) break;
        if (state.isLost) child.kill();
      });
      child.channel.on('error', () => {});
      void child.exited.then((exit) => {
        state.lose(describeExit(exit, child.stderr.bytesSeen));
      });
    },
    (error: unknown) => {
      state.lose(`The engine host could not start: ${(error as Error).message}`);
    },
  );

  const link = (ready: Promise<void>): HostLink => ({
    ready,
    lost: state.lost,
    send(frame) {
      void starting.then((child) => {
        if (!state.isLost) child.channel.write(encodeFrame(frame));
      });
    },
    onFrame: (listener) => state.onFrame(listener),
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
    ...(reuse ? { nextProgram: () => link(state.awaitNextProgram()) } : {}),
  });
  return link(state.ready);
}
