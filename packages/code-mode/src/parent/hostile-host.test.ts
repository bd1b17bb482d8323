import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { defineTool, type Tool } from '@ghost/core';
import { Type } from 'typebox';
import { describe, expect, it } from 'vitest';
import type { ProgramResult } from '../engine.js';
import { CodeModeHostError } from '../errors.js';
import type { CodeModeLimits } from '../limits.js';
import { leftoverEntries, openCodeModeSession } from '../open-code-mode-session.js';
import { maxFrameBytes } from '../shared/frame-codec.js';
import { protocolVersion } from '../shared/protocol.js';
import { descendantProcesses } from '../testing/child-processes.js';
import {
  type HostileHostOptions,
  type HostileStep,
  type HostileTemplate,
  hostileHandshake,
  hostileHostEngine,
} from '../testing/hostile-host.js';

// Forged frames of tens of megabytes take seconds to build and read on a busy machine.
const heavyCase = { timeout: 120_000 };

// Every case starts a real child process through the real unrestricted sandbox, plays a forged
// host, and checks what code mode promises for a compromised host: the program ends with an error
// the model can read, the parent does not crash (the suite-wide setup fails any test that lets a
// rejection or exception go unhandled), and no process or workspace outlives the session.

setFlagsFromString('--expose-gc');
const collectGarbage = runInNewContext('gc') as () => void;

/** The heap in use once garbage is collected: what the parent really holds. */
function heldHeapBytes(): number {
  collectGarbage();
  return process.memoryUsage().heapUsed;
}

const delay = (milliseconds: number) => new Promise((resolve) => setTimeout(resolve, milliseconds));

/** Waits until no host of this process runs; a host the parent gave up on is killed at once. */
async function hostsGone(): Promise<void> {
  for (let attempt = 0; attempt < 100; attempt += 1) {
    if ((await descendantProcesses()).length === 0) return;
    await delay(100);
  }
  expect(await descendantProcesses()).toEqual([]);
}

const done = (value: HostileTemplate): HostileStep => ({
  send: { type: 'done', programId: '$programId', status: 'completed', value },
});

const calls = (...list: HostileTemplate[]): HostileStep => ({
  send: { type: 'tool_calls', programId: '$programId', calls: list },
});

/** A `tool_calls` frame of `count` calls made from `each` (`'$index'` gives each its own id). */
const manyCalls = (count: number, each: HostileTemplate): HostileStep => ({
  send: { type: 'tool_calls', programId: '$programId', calls: { $many: count, each } },
});

const call = (callId: HostileTemplate, input: HostileTemplate = { text: 'hi' }, name = 'echo') => ({
  callId,
  name,
  input,
});

interface HostileRun {
  readonly result: ProgramResult;
  /** What the echo tool was called with. */
  readonly echoed: readonly string[];
}

interface HostileSettings {
  readonly host?: HostileHostOptions;
  readonly limits?: Partial<CodeModeLimits>;
  readonly tools?: readonly Tool[];
  readonly observationWindowMs?: number;
  readonly signal?: AbortSignal;
}

/** Opens a session on a forged host, runs one program, and checks that nothing is left behind. */
async function runHostile(
  steps: readonly HostileStep[],
  settings: HostileSettings = {},
): Promise<HostileRun> {
  const echoed: string[] = [];
  const echo = defineTool({
    name: 'echo',
    description: 'Returns its input.',
    input: Type.Object({ text: Type.String() }),
    execute: ({ text }) => {
      echoed.push(text);
      return { text };
    },
  });
  const opened = await openCodeModeSession({
    engine: hostileHostEngine(steps, settings.host),
    sandbox: 'unrestricted',
    tools: [echo, ...(settings.tools ?? [])],
    prewarm: false,
    observationWindowMs: settings.observationWindowMs ?? 100_000,
    ...(settings.limits ? { limits: settings.limits } : {}),
  });
  try {
    const result = await opened.session.execute(
      '1',
      settings.signal === undefined ? {} : { signal: settings.signal },
    );
    // The program is over: its host is gone before anyone closes the session.
    if (result.status !== 'still_working') await hostsGone();
    return { result, echoed };
  } finally {
    await opened.close();
    expect(await descendantProcesses()).toEqual([]);
    expect(await leftoverEntries(opened.workspaceRoot)).toEqual([]);
  }
}

/** The error of a program that ended because its host broke the protocol, checked as the model reads it. */
function protocolError(run: HostileRun): string {
  expect(run.result.status).toBe('error');
  const error = run.result.error ?? '';
  expect(error).toMatch(/^The engine host broke the protocol: /);
  expect(error).toMatch(/The program did not finish; the next exec starts in a fresh host\.$/);
  // Whatever the host sent, the message stays short: it describes, never repeats.
  expect(error.length).toBeLessThan(1_000);
  return error;
}

/** A session whose hosts never start: exec fails with the reason, after one retry. */
async function startFailure(steps: readonly HostileStep[], host: HostileHostOptions = {}): Promise<Error> {
  const opened = await openCodeModeSession({
    engine: hostileHostEngine(steps, { startTimeoutMs: 1_000, ...host }),
    sandbox: 'unrestricted',
  });
  try {
    const failure = await opened.session.execute('1').then(
      () => new Error('exec succeeded'),
      (error: Error) => error,
    );
    expect(failure).toBeInstanceOf(CodeModeHostError);
    expect(failure.message.length).toBeLessThan(1_000);
    return failure;
  } finally {
    await opened.close();
    expect(await descendantProcesses()).toEqual([]);
    expect(await leftoverEntries(opened.workspaceRoot)).toEqual([]);
  }
}

describe('a forged host before its program', heavyCase, () => {
  it('that never says hello is given up after the start timeout, and killed', async () => {
    const failure = await startFailure([]);
    expect(failure.message).toMatch(
      /^The engine host could not start: The engine host did not start: it sent no hello within 1 s\.$/,
    );
  });

  it('that says hello but never ready is given up after the start timeout', async () => {
    const failure = await startFailure(hostileHandshake.slice(0, 2));
    expect(failure.message).toMatch(/it sent no ready within 1 s of being set up\.$/);
  });

  it('does not hold exec past its signal: an aborted exec ends at once with the reason', async () => {
    const opened = await openCodeModeSession({
      engine: hostileHostEngine([]), // silent, with the default 30 s start timeout
      sandbox: 'unrestricted',
    });
    try {
      const controller = new AbortController();
      const executing = opened.session.execute('1', { signal: controller.signal });
      await delay(300);
      controller.abort(new Error('The run was cancelled.'));
      await expect(executing).rejects.toThrow('The run was cancelled.');
      // The session is still usable for its next control operation.
      await expect(opened.session.wait()).rejects.toThrow(/No program is running/);
    } finally {
      await opened.close();
    }
    expect(await descendantProcesses()).toEqual([]);
    expect(await leftoverEntries(opened.workspaceRoot)).toEqual([]);
  });

  it('that never says hello holds exec no longer than its observation window: exec answers still_working, and stop ends it', async () => {
    const opened = await openCodeModeSession({
      engine: hostileHostEngine([]), // silent, with the default 30 s start timeout
      sandbox: 'unrestricted',
      prewarm: false,
      observationWindowMs: 300,
    });
    try {
      expect(await opened.session.execute('1')).toEqual({ status: 'still_working', output: '' });
      expect(await opened.session.wait({ observationWindowMs: 300 })).toEqual({
        status: 'still_working',
        output: '',
      });
      expect(await opened.session.stop()).toEqual({ status: 'terminated', output: '' });
      await hostsGone();
    } finally {
      await opened.close();
    }
    expect(await descendantProcesses()).toEqual([]);
    expect(await leftoverEntries(opened.workspaceRoot)).toEqual([]);
  });

  it('that gets ready after exec answered still_working runs the program, and wait returns its result', async () => {
    const opened = await openCodeModeSession({
      engine: hostileHostEngine([...hostileHandshake, done(42)]),
      sandbox: 'unrestricted',
      prewarm: false,
      // Shorter than any process start, so exec answers before the host is ready.
      observationWindowMs: 1,
    });
    try {
      let result = await opened.session.execute('1');
      while (result.status === 'still_working') {
        result = await opened.session.wait({ observationWindowMs: 60_000 });
      }
      expect(result).toEqual({ status: 'completed', output: '', value: 42 });
    } finally {
      await opened.close();
    }
    expect(await descendantProcesses()).toEqual([]);
  });

  it('that never says hello holds the program no longer than wallSeconds', async () => {
    const run = await runHostile([], { limits: { wallSeconds: 1 } });
    expect(run.result).toEqual({
      status: 'error',
      output: '',
      error:
        'The program ran past its time limit of 1 s (limits.wallSeconds) and was stopped before its engine host was ready.',
    });
  });

  it('that nests its hello a million levels deep is refused without a crash', async () => {
    const failure = await startFailure([
      { send: { type: 'hello', protocol: protocolVersion, engine: 'x', extra: { $nest: 1_000_000 } } },
    ]);
    expect(failure.message).toMatch(
      /broke the protocol: A host frame nests deeper than values may \(256 levels/,
    );
  });

  it('that speaks another protocol version is refused, naming it', async () => {
    const failure = await startFailure([{ send: { type: 'hello', protocol: 99, engine: 'x' } }]);
    expect(failure.message).toMatch(
      /it should say hello with protocol \d+ first, and sent a hello with protocol 99\./,
    );
  });

  it('that sends a frame before hello is refused', async () => {
    const failure = await startFailure([{ send: { type: 'ready' } }]);
    expect(failure.message).toMatch(
      /it should say hello with protocol \d+ first, and sent a 'ready' frame\./,
    );
  });

  it('that sends frames before it is given a program is refused', async () => {
    const opened = await openCodeModeSession({
      engine: hostileHostEngine([
        ...hostileHandshake.slice(0, 3),
        { send: { type: 'output', programId: 'early', text: 'before any program' } },
      ]),
      sandbox: 'unrestricted',
      prewarm: false,
      observationWindowMs: 100_000,
    });
    try {
      // Refused while exec waits for it (exec fails) or, when the frame comes after the program
      // was sent, as a frame of another program (the program fails).
      const outcome = await opened.session.execute('1').then(
        (result) => result.error,
        (error: Error) => error.message,
      );
      expect(outcome).toMatch(
        /it sent a 'output' frame (before it was given a program|for another program \(the string "early"\))/,
      );
    } finally {
      await opened.close();
    }
    expect(await descendantProcesses()).toEqual([]);
  });
});

describe('a forged host while its program runs', heavyCase, () => {
  it('ends the program when a frame brings a million tool calls, running none', async () => {
    const run = await runHostile([...hostileHandshake, manyCalls(1_000_000, call('$index'))]);
    expect(protocolError(run)).toMatch(
      /it sent 1000000 tool calls when the program had 1000 left of its 1000 \(limits\.toolCalls\)/,
    );
    expect(run.echoed).toEqual([]);
  });

  it('ends the program when calls pass limits.toolCalls over several frames', async () => {
    const run = await runHostile(
      [...hostileHandshake, calls(call('1'), call('2')), calls(call('3'), call('4'))],
      {
        limits: { toolCalls: 3 },
      },
    );
    expect(protocolError(run)).toMatch(/it sent 2 tool calls when the program had 1 left of its 3/);
    expect(run.echoed.length).toBeLessThanOrEqual(2);
  });

  it('ends the program when a call id is used twice, across frames, without running it again', async () => {
    const run = await runHostile([
      ...hostileHandshake,
      calls(call('7', { text: 'first' })),
      { await: 'tool_results', results: 1 },
      calls(call('7', { text: 'again' })),
    ]);
    expect(protocolError(run)).toMatch(/it sent the call id "7" twice; every call has its own\./);
    expect(run.echoed).toEqual(['first']);
  });

  it('ends the program when a frame repeats a call id, running none of its calls', async () => {
    const run = await runHostile([...hostileHandshake, calls(call('1'), call('1'))]);
    expect(protocolError(run)).toMatch(/the call id "1" twice/);
    expect(run.echoed).toEqual([]);
  });

  it.each([
    [
      'a call id that is a number',
      calls(call(7)),
      /A tool call's callId must be a string of 1 to 128 characters, not 7\./,
    ],
    [
      'a call id of a megabyte',
      calls(call({ $repeat: 'c', times: 1_000_000 })),
      /callId must be a string of 1 to 128 characters, not the string "c{40}"… \(1000000 characters\)\./,
    ],
    [
      'a program id of 10 MB',
      { send: { type: 'output', programId: { $repeat: 'p', times: 10_000_000 }, text: 'x' } },
      /An 'output' frame's programId must be a string of 1 to 128 characters, not the string "p{40}"… \(10000000 characters\)\./,
    ],
    [
      'a frame for another program',
      { send: { type: 'tool_calls', programId: 'p999', calls: [call('1')] } },
      /it sent a 'tool_calls' frame for another program \(the string "p999"\) while running 'p1'\./,
    ],
    [
      'an unknown frame type',
      { send: { type: 'shell', command: 'rm -rf /' } },
      /Unknown host frame type: the string "shell"\./,
    ],
    ['a frame that is not JSON', { sendBody: '{"type":' }, /A frame is not valid JSON/],
    ['a frame that is an array', { sendBody: '[1,2]' }, /A frame must hold a JSON object\./],
    [
      'a frame declared over the cap',
      { sendHeader: maxFrameBytes + 1 },
      /A frame declared 67108865 bytes, over the 67108864-byte limit\./,
    ],
    [
      'a frame nested a million levels deep',
      { send: { type: 'output', programId: '$programId', text: '', extra: { $nest: 1_000_000 } } },
      /A host frame nests deeper than values may \(256 levels of arrays and objects\)\./,
    ],
    [
      'tool call arguments nested deeper than values may',
      calls(call('1', { text: 'x', deep: { $nest: 300 } })),
      /nests deeper than values may/,
    ],
    [
      'a negative skippedBytes',
      { send: { type: 'output', programId: '$programId', text: '', skippedBytes: -5 } },
      /'skippedBytes' must be a whole number of bytes, not -5\./,
    ],
    [
      'a skippedBytes that is a string',
      { send: { type: 'output', programId: '$programId', text: '', skippedBytes: '5' } },
      /'skippedBytes' must be a whole number of bytes, not the string "5"\./,
    ],
    [
      'a second hello',
      { send: { type: 'hello', protocol: protocolVersion, engine: 'x' } },
      /it sent a second 'hello' frame\./,
    ],
    [
      'a done whose error is not a string',
      { send: { type: 'done', programId: '$programId', status: 'error', error: { message: 'x' } } },
      /A 'done' frame's error must be a string, not an object with the keys "message"\./,
    ],
  ] as [string, HostileStep, RegExp][])('ends the program on %s', async (_what, step, message) => {
    const run = await runHostile([...hostileHandshake, step]);
    expect(protocolError(run)).toMatch(message);
    expect(run.echoed).toEqual([]);
  });

  it('ignores what a host sends after done: no tool runs, the value stands', async () => {
    const run = await runHostile([...hostileHandshake, done('finished'), calls(call('1')), done('again')]);
    expect(run.result).toEqual({ status: 'completed', output: '', value: 'finished' });
    expect(run.echoed).toEqual([]);
  });
});

describe('a forged host that sends too much', heavyCase, () => {
  it('gets at most outputBytes of a 60 MB output frame into the result', async () => {
    const run = await runHostile([
      ...hostileHandshake,
      { send: { type: 'output', programId: '$programId', text: { $repeat: 'o', times: 60_000_000 } } },
      done('ok'),
    ]);
    expect(run.result.status).toBe('completed');
    expect(run.result.output.startsWith('o'.repeat(1000))).toBe(true);
    expect(run.result.output).toMatch(
      /\[… 59,000,000 bytes of output cut here: the output passed its 1,000,000-byte limit/,
    );
    expect(Buffer.byteLength(run.result.output)).toBeLessThan(1_000_200);
  });

  it('coalesces a flood of cut-output notes and counts them against the bound', async () => {
    // Each frame claims bytes were cut before its text: unbounded, 200,000 notes would be 30 MB.
    const run = await runHostile(
      [
        ...hostileHandshake,
        { send: { type: 'output', programId: '$programId', text: 'x', skippedBytes: 1 }, times: 200_000 },
        done('ok'),
      ],
      { limits: { outputBytes: 10_000 } },
    );
    expect(run.result.status).toBe('completed');
    expect(Buffer.byteLength(run.result.output)).toBeLessThan(10_000 + 4_096 + 200);
    expect(run.result.output).toMatch(/bytes of output cut here/);
  });

  it('writes a count of cut bytes past the safe integers as a bound, not in garbled exponent notation', async () => {
    // Each frame claims the largest safe count; added up they pass 10^21, which String() writes as 1.08e+21.
    const run = await runHostile(
      [
        ...hostileHandshake,
        {
          send: { type: 'output', programId: '$programId', text: 'x', skippedBytes: Number.MAX_SAFE_INTEGER },
          times: 120_000,
        },
        done('ok'),
      ],
      { limits: { outputBytes: 10_000 } },
    );
    expect(run.result.status).toBe('completed');
    const counts = [...run.result.output.matchAll(/\[… (.*?) bytes of output cut here/g)].map(
      (match) => match[1],
    );
    expect(counts.length).toBeGreaterThan(0);
    for (const count of counts) expect(count).toMatch(/^(\d{1,3}(,\d{3})*|more than 9,007,199,254,740,991)$/);
    expect(counts.at(-1)).toBe('more than 9,007,199,254,740,991');
  });

  it('turns a 25 MB value into an error that names its size and what to do', async () => {
    const run = await runHostile([...hostileHandshake, done({ $repeat: 'v', times: 25_000_000 })]);
    expect(run.result).toEqual({
      status: 'error',
      output: '',
      error:
        "The program's value is 25,000,002 bytes of JSON, over the 1,000,000-byte limit (limits.outputBytes). Return less (a summary, a count, the first items), or write it with text() or console.log, whose output keeps its head and tail.",
    });
  });

  it('keeps the head and the tail of a 25 MB error message', async () => {
    const run = await runHostile([
      ...hostileHandshake,
      {
        send: {
          type: 'done',
          programId: '$programId',
          status: 'error',
          error: { $repeat: 'e', times: 25_000_000 },
        },
      },
    ]);
    const error = run.result.error ?? '';
    expect(run.result.status).toBe('error');
    expect(Buffer.byteLength(error)).toBeLessThanOrEqual(1_000_000);
    expect(error).toMatch(
      /^e+\n\[… [\d,]+ bytes of the error message cut here: it passed its 1,000,000-byte limit \(limits\.outputBytes\), so its start and end are kept …\]\ne+$/,
    );
  });

  it('holds the heap bounded through 100 MB of frames', async () => {
    let reachedGate: () => void = () => {};
    const gateReached = new Promise<void>((resolve) => {
      reachedGate = resolve;
    });
    let openGate: () => void = () => {};
    const gateOpened = new Promise<void>((resolve) => {
      openGate = resolve;
    });
    const gate = defineTool({
      name: 'gate',
      description: 'Waits for the test.',
      input: Type.Object({}),
      execute: async () => {
        reachedGate();
        await gateOpened;
        return 'opened';
      },
    });
    const before = heldHeapBytes();
    const running = runHostile(
      [
        ...hostileHandshake,
        // 1,000,000 frames of 100 bytes: each with text and a claim of cut bytes before it.
        {
          send: {
            type: 'output',
            programId: '$programId',
            text: { $repeat: 'y', times: 40 },
            skippedBytes: 1,
          },
          times: 1_000_000,
        },
        calls(call('gate', {}, 'gate')),
        { await: 'tool_results', results: 1 },
        done('ok'),
      ],
      { tools: [gate] },
    );
    await gateReached;
    // Every frame of the flood has arrived (the gate's call came after them); the program is
    // still running, so whatever the parent keeps for it is still held.
    const held = heldHeapBytes() - before;
    openGate();
    const run = await running;
    expect(run.result.status).toBe('completed');
    expect(held).toBeLessThan(32 * 1024 * 1024);
  });
});

describe('tool results a forged host receives', heavyCase, () => {
  const sized = defineTool({
    name: 'sized',
    description: 'Returns a string of the size asked for.',
    input: Type.Object({ bytes: Type.Number() }),
    execute: ({ bytes }) => 'r'.repeat(bytes),
  });
  const sizedCalls = (count: number, bytes: number) =>
    manyCalls(count, { callId: '$index', name: 'sized', input: { bytes } });

  interface Received {
    readonly type: string;
    readonly bytes: number;
    readonly results?: readonly { callId: string; ok: boolean; error?: string; valueBytes?: number }[];
  }

  function resultFrames(run: HostileRun): Received[] {
    expect(run.result.status).toBe('completed');
    return (run.result.value as unknown as Received[]).filter((frame) => frame.type === 'tool_results');
  }

  it('refuses a result over resultBytes in the program, naming its size and the limit', async () => {
    const run = await runHostile(
      [
        ...hostileHandshake,
        sizedCalls(8, 9_000_000),
        { await: 'tool_results', results: 8 },
        done('$received'),
      ],
      { tools: [sized] },
    );
    const results = resultFrames(run).flatMap((frame) => frame.results ?? []);
    expect(results).toHaveLength(8);
    for (const result of results) {
      expect(result).toMatchObject({
        ok: false,
        error:
          'The result of tools.sized is 9,000,002 bytes of JSON, over the 4,194,304-byte limit (limits.resultBytes), so it was not sent to the program. Ask the tool for less (narrower arguments, fewer items or fields).',
      });
    }
  });

  it('refuses a single result of 70 MB, over the frame cap itself', async () => {
    const run = await runHostile(
      [
        ...hostileHandshake,
        sizedCalls(1, 70_000_000),
        { await: 'tool_results', results: 1 },
        done('$received'),
      ],
      { tools: [sized] },
    );
    const [result] = resultFrames(run).flatMap((frame) => frame.results ?? []);
    expect(result?.error).toMatch(
      /is 70,000,002 bytes of JSON, over the 4,194,304-byte limit \(limits\.resultBytes\)/,
    );
  });

  it('splits a batch of results over the frame cap into frames under it', async () => {
    // Eight 9 MB results at once are 72 MB: as one frame, over the 64 MiB cap.
    const run = await runHostile(
      [
        ...hostileHandshake,
        sizedCalls(8, 9_000_000),
        { await: 'tool_results', results: 8 },
        done('$received'),
      ],
      { tools: [sized], limits: { resultBytes: 16 * 1024 * 1024 } },
    );
    const frames = resultFrames(run);
    expect(frames.length).toBeGreaterThan(1);
    for (const frame of frames) expect(frame.bytes).toBeLessThanOrEqual(maxFrameBytes);
    const results = frames.flatMap((frame) => frame.results ?? []);
    expect(results.map((result) => [result.ok, result.valueBytes])).toEqual(
      Array.from({ length: 8 }, () => [true, 9_000_002]),
    );
  });

  it('gives up on a host that stops reading its results, instead of buffering them', async () => {
    const run = await runHostile([...hostileHandshake, { stopReading: true }, sizedCalls(20, 3_000_000)], {
      tools: [sized],
      host: { unreadBytesLimit: 8 * 1024 * 1024 },
    });
    expect(run.result.status).toBe('error');
    expect(run.result.error).toMatch(
      /^The engine host stopped reading what the parent sends: [\d,]+ bytes waited unread, more than the 8,388,608 the parent holds for a host\. The program did not finish/,
    );
  });

  it('ends a program whose host sends calls faster than they run', async () => {
    const never = defineTool({
      name: 'never',
      description: 'Never returns.',
      input: Type.Object({ text: Type.String() }),
      execute: () => new Promise(() => {}),
    });
    // Three frames of 45 MB of arguments each, for a tool that never returns: 135 MB held.
    const heavy = (callId: string): HostileStep =>
      calls({ callId, name: 'never', input: { text: { $repeat: 'a', times: 45_000_000 } } });
    const run = await runHostile([...hostileHandshake, heavy('1'), heavy('2'), heavy('3')], {
      tools: [never],
    });
    expect(protocolError(run)).toMatch(
      /it sent tool calls faster than they ran: [\d,]+ bytes of calls waiting, more than the 134,217,728 the parent holds for a program\./,
    );
  });
});

describe('after every forged host', heavyCase, () => {
  it('the parent still runs programs', async () => {
    const run = await runHostile([
      ...hostileHandshake,
      calls(call('1', { text: 'healthy' })),
      { await: 'tool_results' },
      done('$received'),
    ]);
    expect(run.result.status).toBe('completed');
    expect(run.echoed).toEqual(['healthy']);
  });
});
