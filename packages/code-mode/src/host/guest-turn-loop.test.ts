import { createContext, runInContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import type { HostLimits } from '../shared/protocol.js';
import type { HostProgram, ProgramCompletion } from './engine-driver.js';
import { GuestTurnLoop, type GuestTurns, hostThen } from './guest-turn-loop.js';

const limits: HostLimits = { outputBytes: 1000, memoryBytes: 1 << 20, cpuSeconds: 1, wallSeconds: 1 };

function hostProgram(sent: string[] = []): HostProgram & { isStopRequested: boolean } {
  return {
    programId: 'p1',
    source: '',
    isStopRequested: false,
    sendCalls: (calls) => sent.push(calls),
    write: () => {},
  };
}

/** A guest that queues one call, then completes with the result it is given. */
function oneCallGuest(): GuestTurns & { jobsRun: number } {
  let queued: string | undefined = '[{"callId":"c1","name":"t","input":{}}]';
  let outcome: ProgramCompletion | undefined;
  return {
    jobsRun: 0,
    runJobs() {
      this.jobsRun += 1;
    },
    takeCalls: () => {
      const calls = queued;
      queued = undefined;
      return calls;
    },
    deliverResults: (json) => {
      outcome = { status: 'completed', value: JSON.parse(json) as string };
      return 0;
    },
    outcome: () => outcome,
    hasProgramEnded: () => outcome !== undefined,
  };
}

describe('GuestTurnLoop', () => {
  it('runs the jobs every turn, sends the queued calls and delivers their results', async () => {
    const sent: string[] = [];
    const loop = new GuestTurnLoop(hostProgram(sent), limits);
    const guest = oneCallGuest();
    const completion = loop.run(guest);
    await new Promise((resolve) => setImmediate(resolve));
    expect(sent).toHaveLength(1);
    loop.deliverResults('"answer"');
    await expect(completion).resolves.toEqual({ status: 'completed', value: 'answer' });
    expect(guest.jobsRun).toBe(2);
  });

  it('ends a program that waits for nothing with the stall error', async () => {
    const loop = new GuestTurnLoop(hostProgram(), limits);
    const completion = await loop.run({ ...oneCallGuest(), takeCalls: () => undefined });
    expect(completion.error).toMatch(/waiting for a promise that nothing can settle/);
  });

  it('stops at the stop flag and at wallSeconds between turns, naming the limit', async () => {
    const program = hostProgram();
    program.isStopRequested = true;
    await expect(new GuestTurnLoop(program, limits).run(oneCallGuest())).resolves.toEqual({
      status: 'error',
      error: 'The program was stopped.',
    });
    const wall = new GuestTurnLoop(hostProgram(), { ...limits, wallSeconds: 0.05 });
    const spinning: GuestTurns = {
      ...oneCallGuest(),
      runJobs: () => new Promise((resolve) => setTimeout(resolve, 10)),
      hasPendingJobs: () => true,
    };
    const completion = await wall.run(spinning);
    expect(completion.error).toMatch(/time limit of 0.05 s \(limits.wallSeconds\)/);
  });

  it("ends with the engine's failure for an error a turn throws", async () => {
    const loop = new GuestTurnLoop(hostProgram(), limits);
    const completion = await loop.run({
      ...oneCallGuest(),
      runJobs: () => {
        throw new RangeError('too deep');
      },
    });
    expect(completion).toEqual({ status: 'error', error: 'RangeError: too deep' });
  });

  it('ends a waiting program when closed', async () => {
    const loop = new GuestTurnLoop(hostProgram(), limits);
    const completion = loop.run(oneCallGuest());
    await new Promise((resolve) => setImmediate(resolve));
    loop.close();
    await expect(completion).resolves.toMatchObject({ status: 'error' });
  });
});

describe('hostThen', () => {
  it('sees a guest promise settle even when the guest replaced its then', async () => {
    const context = createContext({});
    const promise = runInContext(
      'Promise.prototype.then = function () { throw new Error("replaced"); }; Promise.resolve(7)',
      context,
    ) as Promise<number>;
    const value = await new Promise((resolve) => hostThen(promise, resolve));
    expect(value).toBe(7);
  });
});
