import { setTimeout } from 'node:timers/promises';
import { formatInterrupt } from '@ghost/code-mode/host';
import { describe, expect, it } from 'vitest';
import { bwrapDetection, bwrapUnavailable, openPythonSession } from './test-support/python-session.js';

const hostLimits = { outputBytes: 10_000, memoryBytes: 64 * 1024 * 1024, cpuSeconds: 1, wallSeconds: 2 };

// Every code-mode limit, on Python programs in bubblewrap. Host starts take seconds on a busy
// machine, hence the long timeout.
// Skipped only where bubblewrap cannot run (macOS, a kernel without user namespaces), as its name
// says; setup installs it and checks it runs on Linux.
describe.skipIf(!bwrapDetection.available)(
  `the limits of Python programs${bwrapUnavailable}`,
  { timeout: 120_000 },
  () => {
    it('stops a busy loop at cpuSeconds, and one that catches the interrupt too', async () => {
      const { session, close } = await openPythonSession({ limits: { cpuSeconds: 1, wallSeconds: 60 } });
      try {
        const cpu = formatInterrupt('cpu', { ...hostLimits, wallSeconds: 60 });
        expect(await session.execute('print("spinning")\nwhile True: pass')).toEqual({
          status: 'error',
          output: 'spinning\n',
          error: cpu,
        });
        // KeyboardInterrupt is catchable; the host raises it again at every check until the
        // program gives up, and the sandbox's CPU limit ends the host should it never do.
        const stubborn = await session.execute(
          [
            'n = 0',
            'while n < 1000:',
            '    try:',
            '        while True: pass',
            '    except BaseException:',
            '        n += 1',
            'n',
          ].join('\n'),
        );
        expect(stubborn).toMatchObject({ status: 'error', error: cpu });
      } finally {
        await close();
      }
    });

    it('stops a program at wallSeconds, busy or waiting', async () => {
      const { session, close } = await openPythonSession({ limits: { cpuSeconds: 30, wallSeconds: 2 } });
      try {
        // wallSeconds counts from exec, the host's start included: the spare started with the
        // session gets the time to be ready first.
        await setTimeout(10_000);
        // The host's watchdog or the session's, whichever sees the clock first.
        const wall = expect.stringMatching(
          /^The program ran (longer than|past) its time limit of 2 s \(limits\.wallSeconds\) and was stopped\.$/,
        );
        expect(await session.execute('import asyncio\nawait asyncio.sleep(30)')).toMatchObject({
          status: 'error',
          error: wall,
        });
        await setTimeout(10_000); // the next spare, too
        expect(await session.execute('import time\nwhile True: time.sleep(0.001)')).toMatchObject({
          status: 'error',
          error: wall,
        });
      } finally {
        await close();
      }
    });

    it('keeps the head and tail of output past outputBytes, and refuses a value over it', async () => {
      const { session, close } = await openPythonSession({ limits: { outputBytes: 10_000 } });
      try {
        const printed = await session.execute('for i in range(5000): print("line", i)\n"done"');
        expect(printed).toMatchObject({ status: 'completed', value: 'done' });
        expect(printed.output.startsWith('line 0\nline 1\n')).toBe(true);
        expect(printed.output.endsWith('line 4998\nline 4999\n')).toBe(true);
        expect(printed.output).toMatch(/bytes of output cut here: the output passed its 10,000-byte limit/);
        const large = await session.execute('"v" * 20000');
        expect(large.error).toMatch(
          /^The program's value is 20,002 bytes of JSON, over the 10,000-byte limit/,
        );
      } finally {
        await close();
      }
    });

    it('refuses a program over sourceBytes and calls over toolCalls', async () => {
      const { session, close } = await openPythonSession({ limits: { sourceBytes: 400, toolCalls: 2 } });
      try {
        await expect(session.execute(`x = "${'a'.repeat(500)}"`)).rejects.toThrow(/over the 400-byte limit/);
        const calls = await session.execute(
          [
            'outcomes = []',
            'for n in range(3):',
            '    try:',
            '        outcomes.append((await tools.echo(text=str(n)))["text"])',
            '    except ToolError as error:',
            '        outcomes.append("refused")',
            'outcomes',
          ].join('\n'),
        );
        expect(calls.value).toEqual(['0', '1', 'refused']);
      } finally {
        await close();
      }
    });

    it('stops a running program when asked', async () => {
      const { session, close } = await openPythonSession({ limits: { cpuSeconds: 30 } });
      try {
        const running = await session.execute('while True: pass', { observationWindowMs: 300 });
        expect(running.status).toBe('still_working');
        expect(await session.stop()).toMatchObject({ status: 'terminated' });
      } finally {
        await close();
      }
    });

    it('refuses a session whose limits.memoryBytes is below the engine floor, saying what to set', async () => {
      await expect(openPythonSession({ limits: { memoryBytes: 16 * 1024 * 1024 } })).rejects.toThrow(
        "openCodeModeSession(): engine 'python' needs limits.memoryBytes of at least 33554432 bytes (32 MiB), and it is 16777216 (16 MiB). Set limits: { memoryBytes: 33554432 } or more, or use another engine.",
      );
    });

    it('ends a program that grows past limits.memoryBytes, and the next one runs', async () => {
      const { session, close } = await openPythonSession({ limits: { memoryBytes: 64 * 1024 * 1024 } });
      try {
        const bomb = await session.execute(
          'chunks = []\nfor n in range(400):\n    chunks.append(bytearray(1024 * 1024))\nlen(chunks)',
        );
        // In bubblewrap the sandbox's memory limit (memoryBytes + the host's allowance) is the
        // bound; the host's own check after each growth stops it first where there is room.
        expect(bomb.status).toBe('error');
        expect(bomb.error).toMatch(/memory limit|limits\.memoryBytes/);
        expect((await session.execute('len(bytearray(1024 * 1024))')).value).toBe(1024 * 1024);
      } finally {
        await close();
      }
    });
  },
);
