import type { SandboxExit, SandboxLimits, SandboxProcess } from '@ghost/core/sandbox';
import { errorMessage } from '../shared/error-message.js';
import { formatUntrusted } from '../shared/format-untrusted.js';
import { encodeFrame, FrameDecoder, maxFrameBytes } from '../shared/frame-codec.js';
import { formatBytes } from '../shared/head-and-tail.js';
import {
  type GuestToolEntry,
  type HostFrame,
  type HostLimits,
  type HostReuse,
  type ParentFrame,
  parseHostFrame,
  protocolVersion,
  type SetupFrame,
} from '../shared/protocol.js';
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
  /**
   * Sends a frame. Never throws: a frame that cannot be encoded or delivered, or a host that
   * stops reading what it is sent, loses the host instead.
   */
  send(frame: ParentFrame): void;
  /**
   * Registers the listener for host frames after the handshake. `bytes` is the frame's size on
   * the wire, or 0 where frames are not bytes (a worker's message port).
   */
  onFrame(listener: HostFrameListener): void;
  /**
   * Present on a process host: a program now waits for this spare, so if it has not said `hello`
   * yet it ends its warm-up (see `rehearseProgram`) and says it. Nothing once it has.
   */
  hurry?(): void;
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

/** Receives the frames of a host, checked against the protocol. */
export type HostFrameListener = (frame: HostFrame, bytes: number) => void;

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
  /** How long the host may take to say `ready`; past it, it is lost. Default {@link defaultStartTimeoutMs}. */
  readonly startTimeoutMs?: number;
  /**
   * How many bytes the parent lets wait unread in the channel to the host; past it the host is
   * lost. Default {@link defaultUnreadBytesLimit}.
   */
  readonly unreadBytesLimit?: number;
}

/**
 * How long a host may take from its launch to `ready` (and a reused host from `done` to its next
 * `ready`). Hosts start in well under a second; the bound is for one that never answers, so a
 * program does not wait for it forever.
 */
const defaultStartTimeoutMs = 30_000;

/**
 * How many bytes of frames the parent lets a host leave unread before it gives up on it: two full
 * frames. A host reads its channel between stretches of the program; one that stops reading
 * while tool results keep arriving would otherwise make the parent buffer them without bound.
 */
const defaultUnreadBytesLimit = 2 * maxFrameBytes;

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
function formatExit(exit: SandboxExit, stderrBytes: number): string {
  const limit = exit.limitExceeded === undefined ? undefined : limitMessages[exit.limitExceeded];
  if (limit !== undefined) return limit;
  const how = exit.signal ? `signal=${exit.signal}` : `exit_status=${exit.code}`;
  return `The engine host process ended unexpectedly (${how}, stderr_bytes=${stderrBytes}).`;
}

/**
 * The parent's side of the handshake and the link's fate, shared by every placement: expects
 * `hello` with our protocol version, sends `setup`, waits for `ready`, then passes frames on.
 * Anything out of order loses the host, and so does a host that is not ready within the start
 * timeout. Nothing a host sends can make it throw: a listener's failure loses the host too.
 */
export class HostLinkState {
  ready: Promise<void>;
  readonly lost: Promise<string>;
  #listener: HostFrameListener | undefined;
  #stage: 'hello' | 'ready' | 'running' | 'done' = 'hello';
  #isLost = false;
  #lostReason = '';
  #reportLost: (reason: string) => void = () => {};
  #markReady: () => void = () => {};
  #failReady: (error: Error) => void = () => {};
  #startTimer: ReturnType<typeof setTimeout> | undefined;
  readonly #setup: SetupFrame;
  readonly #startTimeoutMs: number;

  constructor(setup: SetupFrame, startTimeoutMs = defaultStartTimeoutMs) {
    this.#setup = setup;
    this.#startTimeoutMs = startTimeoutMs;
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
    clearTimeout(this.#startTimer);
    this.#startTimer = setTimeout(() => {
      const seconds = this.#startTimeoutMs / 1000;
      this.lose(
        this.#stage === 'hello'
          ? `The engine host did not start: it sent no hello within ${seconds} s.`
          : `The engine host did not get ready: it sent no ready within ${seconds} s of being set up.`,
      );
    }, this.#startTimeoutMs);
    // The host's own channel keeps the process alive while it starts; the timer must not.
    this.#startTimer.unref();
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

  /** True while the host has not said `hello` (and is not lost). */
  get isBeforeHello(): boolean {
    return this.#stage === 'hello' && !this.#isLost;
  }

  onFrame(listener: HostFrameListener): void {
    this.#listener = listener;
  }

  /**
   * Handles one raw frame of `bytes` on the wire; `send` answers the handshake. Returns false
   * once the host is lost.
   */
  receive(raw: unknown, bytes: number, send: (frame: SetupFrame) => void): boolean {
    if (this.#isLost) return false;
    let frame: HostFrame;
    try {
      frame = parseHostFrame(raw);
    } catch (error) {
      this.breakProtocol(errorMessage(error));
      return false;
    }
    switch (this.#stage) {
      case 'hello':
        if (frame.type !== 'hello' || frame.protocol !== protocolVersion) {
          const got =
            frame.type === 'hello'
              ? `a hello with protocol ${formatUntrusted(frame.protocol)}`
              : `a '${frame.type}' frame`;
          this.breakProtocol(`it should say hello with protocol ${protocolVersion} first, and sent ${got}.`);
          return false;
        }
        this.#stage = 'ready';
        send(this.#setup);
        break;
      case 'ready':
        if (frame.type !== 'ready') {
          this.breakProtocol(`it should answer setup with ready, and sent a '${frame.type}' frame.`);
          return false;
        }
        this.#stage = 'running';
        clearTimeout(this.#startTimer);
        this.#markReady();
        break;
      case 'running': {
        const listener = this.#listener;
        if (frame.type === 'hello' || frame.type === 'ready' || listener === undefined) {
          this.breakProtocol(
            listener === undefined
              ? `it sent a '${frame.type}' frame before it was given a program.`
              : `it sent a second '${frame.type}' frame.`,
          );
          return false;
        }
        // Before the listener runs: a reused host's listener expects the next `ready` at once.
        if (frame.type === 'done') this.#stage = 'done';
        try {
          listener(frame, bytes);
        } catch (error) {
          this.lose(`The parent failed to handle a frame from the engine host: ${errorMessage(error)}`);
        }
        break;
      }
      case 'done':
        this.breakProtocol(`it sent a '${frame.type}' frame after its program was done.`);
        return false;
    }
    return !this.#isLost;
  }

  breakProtocol(message: string): void {
    this.lose(`The engine host broke the protocol: ${message}`);
  }

  /** Records, once, that the host is gone. */
  lose(reason: string): void {
    if (this.#isLost) return;
    this.#isLost = true;
    this.#lostReason = reason;
    clearTimeout(this.#startTimer);
    this.#failReady(new Error(reason));
    this.#reportLost(reason);
  }
}

/** Starts the sandboxed process; a factory that throws instead of rejecting rejects here. */
function startProcess(options: ProcessHostOptions): Promise<SandboxProcess> {
  try {
    return options.sandbox.spawn(options.command);
  } catch (error) {
    return Promise.reject(error);
  }
}

/** Kills a host process; a kill that fails (it is already gone) needs no handling. */
function killQuietly(child: SandboxProcess): void {
  try {
    child.kill('SIGKILL');
  } catch {
    // The process group is gone or cannot be signalled; close() proves the end either way.
  }
}

/**
 * Starts a host process through the sandbox and speaks the protocol on its fd 3. Everything the
 * process sends is untrusted: a frame over the cap, a malformed or out-of-order frame, a host
 * that is not ready in time, one that stops reading, or the process ending loses the host, and
 * a lost host is killed.
 */
export function launchProcessHost(options: ProcessHostOptions): HostLink {
  const { tools, limits, reuse } = options;
  const unreadBytesLimit = options.unreadBytesLimit ?? defaultUnreadBytesLimit;
  const state = new HostLinkState(
    { type: 'setup', tools, limits, ...(reuse ? { reuse } : {}) },
    options.startTimeoutMs,
  );
  let child: SandboxProcess | undefined;
  let isTerminated = false;
  let isHurried = false;

  const write = (frame: ParentFrame): void => {
    if (state.isLost || child === undefined) return;
    try {
      child.channel.write(encodeFrame(frame));
    } catch (error) {
      state.lose(`The parent could not send the engine host a '${frame.type}' frame: ${errorMessage(error)}`);
      return;
    }
    const unread = child.channel.writableLength;
    if (unread > unreadBytesLimit) {
      state.lose(
        `The engine host stopped reading what the parent sends: ${formatBytes(unread)} bytes waited unread, more than the ${formatBytes(unreadBytesLimit)} the parent holds for a host.`,
      );
    }
  };

  const watch = (started: SandboxProcess): void => {
    const decoder = new FrameDecoder();
    started.channel.on('data', (chunk: Buffer) => {
      if (state.isLost) return;
      let frames: ReturnType<FrameDecoder['pushFrames']>;
      try {
        frames = decoder.pushFrames(chunk);
      } catch (error) {
        state.breakProtocol(errorMessage(error));
        return;
      }
      for (const frame of frames) if (!state.receive(frame.message, frame.bytes, write)) break;
    });
    started.channel.on('error', () => {}); // the process's end reports the loss
    started.exited.then(
      // The backend's contract promises an exit; one that breaks it still loses the host.
      (exit: SandboxExit | undefined) =>
        state.lose(formatExit(exit ?? { code: null, signal: null }, started.stderr.bytesSeen)),
      (error: unknown) => state.lose(`The engine host's sandbox lost track of it: ${errorMessage(error)}`),
    );
  };

  const starting = startProcess(options);
  starting.then(
    (started) => {
      child = started;
      if (state.isLost || isTerminated) {
        killQuietly(started);
        return;
      }
      try {
        watch(started);
      } catch (error) {
        state.lose(`The parent could not watch the engine host: ${errorMessage(error)}`);
        return;
      }
      // A program took this spare before its process had started.
      if (isHurried && state.isBeforeHello) write({ type: 'hurry' });
    },
    (error: unknown) => state.lose(`The engine host could not start: ${errorMessage(error)}`),
  );
  // A lost host may still run (it broke the protocol, or never got ready): it is ended at once.
  void state.lost.then(() => {
    if (child !== undefined) killQuietly(child);
  });

  const link = (ready: Promise<void>): HostLink => ({
    ready,
    lost: state.lost,
    send: write,
    onFrame: (listener) => state.onFrame(listener),
    hurry() {
      if (isHurried) return;
      isHurried = true;
      if (state.isBeforeHello) write({ type: 'hurry' }); // dropped until the process has started
    },
    terminate() {
      isTerminated = true;
      if (child !== undefined) killQuietly(child);
    },
    async close() {
      let started: SandboxProcess;
      try {
        started = await starting;
      } catch {
        return; // never started: nothing to release
      }
      await started.close();
    },
    ...(reuse ? { nextProgram: () => link(state.awaitNextProgram()) } : {}),
  });
  return link(state.ready);
}

/** A link to a host that could not even be launched: lost from the start, with `reason`. */
export function failedHostLink(reason: string): HostLink {
  const ready = Promise.reject(new Error(reason));
  ready.catch(() => {}); // read by whoever waits for it, if anyone
  return {
    ready,
    lost: Promise.resolve(reason),
    send() {},
    onFrame() {},
    terminate() {},
    close: async () => {},
  };
}
