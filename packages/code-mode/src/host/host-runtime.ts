import {
  type ExecuteFrame,
  type GuestToolCall,
  type HostFrame,
  type HostReuse,
  type ParentFrame,
  parseParentFrame,
  type SetupFrame,
} from '../protocol.js';
import type { EngineDriver, HostProgram, PreparedGuest, ProgramCompletion } from './engine-driver.js';
import { guestPrelude, wrapProgram } from './guest-prelude.js';
import { HostOutput } from './host-output.js';

/** How a host talks to the parent: frames out, frames in. */
export interface HostTransport {
  send(frame: HostFrame): void;
  /** Registers the one listener for parent frames, already parsed from the wire. */
  onFrame(listener: (frame: unknown) => void): void;
}

/**
 * Serves a program on `transport`: builds the guest when `setup` arrives and answers `ready`,
 * runs the program `execute` brings, batches its tool calls and output into frames, and sends
 * `done`. A host set up with `reuse` then builds a fresh guest and answers `ready` again, after
 * each program that completed, while it stays within the reuse budget (see `HostReuse`).
 * Resolves once the last `done` is sent; rejects when the parent breaks the protocol.
 */
export function serveProgram(
  driver: EngineDriver,
  transport: HostTransport,
  isStopRequestedOutside: () => boolean = () => false,
): Promise<void> {
  return new Promise<void>((resolveServed, rejectServed) => {
    let setup: SetupFrame | undefined;
    let guest: Promise<PreparedGuest> | undefined;
    let program: { readonly programId: string; isStopRequested: boolean } | undefined;
    let running: PreparedGuest | undefined;

    const prepareGuest = ({ tools, limits }: SetupFrame) => {
      const preparing = driver.prepare({ prelude: guestPrelude, toolsJson: JSON.stringify(tools), limits });
      guest = preparing;
      preparing.then(
        () => transport.send({ type: 'ready' }),
        (error: unknown) => rejectServed(error),
      );
    };

    const onParentFrame = (raw: unknown) => {
      let frame: ParentFrame;
      try {
        frame = parseParentFrame(raw);
      } catch (error) {
        rejectServed(error);
        return;
      }
      switch (frame.type) {
        case 'setup':
          if (setup) return rejectServed(new Error('A host is set up once; it got a second setup.'));
          setup = frame;
          prepareGuest(frame);
          return;
        case 'execute': {
          if (!setup || !guest) return rejectServed(new Error('A host needs setup before execute.'));
          if (program)
            return rejectServed(new Error('A host runs one program at a time; it got a second execute.'));
          const started = { programId: frame.programId, isStopRequested: false };
          const settings = setup;
          program = started;
          const preparing = guest;
          guest = undefined;
          void execute(frame, settings, preparing, started).then((completion) => {
            if (completion.status === 'completed' && settings.reuse && isWithin(settings.reuse)) {
              program = undefined;
              prepareGuest(settings);
            } else {
              resolveServed();
            }
          }, rejectServed);
          return;
        }
        case 'stop':
          if (program?.programId === frame.programId) program.isStopRequested = true;
          return;
        case 'tool_results':
          if (program?.programId !== frame.programId) return;
          running?.deliverResults(JSON.stringify(frame.results));
          return;
      }
    };
    transport.onFrame(onParentFrame);

    const execute = async (
      frame: ExecuteFrame,
      { limits }: SetupFrame,
      preparing: Promise<PreparedGuest>,
      state: { isStopRequested: boolean },
    ): Promise<ProgramCompletion> => {
      const { programId } = frame;
      const output = new HostOutput(limits.outputBytes, (chunk) =>
        transport.send({ type: 'output', programId, ...chunk }),
      );
      const hostProgram: HostProgram = {
        programId,
        source: wrapProgram(frame.source),
        write: (text) => output.write(text),
        sendCalls: (callsJson) => {
          const calls = JSON.parse(callsJson) as GuestToolCall[];
          output.flush(); // output written before a call reaches the parent before the call
          transport.send({ type: 'tool_calls', programId, calls });
        },
        get isStopRequested() {
          // A thread host's stop flag is shared memory: it is seen even while the program
          // keeps the thread too busy to read a stop frame.
          return state.isStopRequested || isStopRequestedOutside();
        },
      };
      let completion: ProgramCompletion;
      let prepared: PreparedGuest | undefined;
      try {
        prepared = await preparing;
        running = prepared;
        completion = await prepared.run(hostProgram);
      } catch (error) {
        completion = {
          status: 'error',
          error: `The ${driver.engine} engine failed: ${(error as Error).message}`,
        };
      }
      running = undefined;
      output.finish();
      transport.send({ type: 'done', programId, ...completion });
      // Freeing the guest costs a fraction of a millisecond; the result goes first.
      prepared?.dispose();
      return completion;
    };
  });
}

/** Whether this host's own totals leave room for another program (see `HostReuse`). */
function isWithin(reuse: HostReuse): boolean {
  const cpu = process.cpuUsage();
  return (cpu.user + cpu.system) / 1e6 < reuse.cpuSeconds && process.memoryUsage.rss() < reuse.residentBytes;
}
