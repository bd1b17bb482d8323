import { describe, expect, it } from 'vitest';
import type { EngineDriver } from '../host/engine-driver.js';
import { createVmDriver } from '../test-support/vm-driver.js';
import { serveProgramInProcess, serveSessionInProcess } from './serve-program-in-process.js';

describe('serveProgramInProcess', () => {
  it("gives a program's value, output and tool calls, answering each call with its input by default", async () => {
    const result = await serveProgramInProcess(createVmDriver(), {
      tools: ['echo', 'get-weather'],
      source:
        'console.log(ALL_TOOLS.map((tool) => tool.name).join());\nconst a = await tools.echo({ n: 1 });\nconst b = await tools.get_weather({ city: "Oslo" });\n[a, b]',
    });
    expect(result).toEqual({
      status: 'completed',
      value: [{ n: 1 }, { city: 'Oslo' }],
      output: 'echo,get_weather\n', // ALL_TOOLS names each tool by its identifier
      skippedOutputBytes: 0,
      toolCalls: [
        { name: 'echo', input: { n: 1 } },
        { name: 'get-weather', input: { city: 'Oslo' } },
      ],
    });
  });

  it('answers calls with answerToolCall, and a throw there fails the call in the program', async () => {
    const result = await serveProgramInProcess(createVmDriver(), {
      tools: ['double', 'broken'],
      answerToolCall: ({ name, input }) => {
        if (name === 'broken') throw new Error('no service');
        return (input as { n: number }).n * 2;
      },
      source:
        'const doubled = await tools.double({ n: 21 });\nlet failed;\ntry { await tools.broken({}); } catch (error) { failed = error.message; }\n[doubled, failed]',
    });
    expect(result.status).toBe('completed');
    expect(result.value).toEqual([42, expect.stringContaining('no service')]);
  });

  it('reports an error and a syntax error as the model reads them, freeing the guest built for them', async () => {
    const driver = createVmDriver();
    const thrown = await serveProgramInProcess(driver, {
      source: 'console.log("before");\nthrow new Error("boom")',
    });
    expect(thrown).toMatchObject({
      status: 'error',
      error: expect.stringContaining('boom'),
      output: 'before\n',
    });
    const unparsed = await serveProgramInProcess(driver, { source: 'return (' });
    expect(unparsed).toMatchObject({ status: 'error', error: expect.stringMatching(/^SyntaxError: /) });
    expect(driver).toMatchObject({ prepared: 2, disposed: 2 });
  });

  it('holds the host to the limits it is given', async () => {
    const result = await serveProgramInProcess(createVmDriver(), {
      tools: ['echo'],
      limits: { outputBytes: 100, toolCalls: 1 },
      source:
        'console.log("x".repeat(1000));\nawait tools.echo({ first: true });\nlet refused;\ntry { await tools.echo({}); } catch (error) { refused = error.message; }\nrefused',
    });
    expect(result.value).toMatch(/limit of 1 tool calls/);
    expect(result.toolCalls).toEqual([{ name: 'echo', input: { first: true } }]);
    expect(result.output.length).toBeLessThan(200);
    expect(result.skippedOutputBytes).toBeGreaterThan(800);
  });

  it('rehearses first when asked, leaving nothing of the rehearsal to the program', async () => {
    const driver = createVmDriver();
    const result = await serveProgramInProcess(driver, {
      rehearse: true,
      source: 'ALL_TOOLS.map((tool) => tool.name)',
    });
    expect(result).toMatchObject({ status: 'completed', value: [], output: '', toolCalls: [] });
    expect(driver.prepared).toBe(2);
  });

  it('rejects when the host sends what the parent would reject', async () => {
    // A driver that hands the host a call without an id: the host passes it on, the parent refuses it.
    const driver: EngineDriver = {
      engine: 'broken',
      prepare: async () => ({
        run: (program) => {
          program.sendCalls('[{"callId":"","name":"echo","input":{}}]');
          return new Promise(() => {});
        },
        deliverResults: () => {},
        dispose: () => {},
      }),
    };
    await expect(serveProgramInProcess(driver, { source: '1' })).rejects.toThrow(/broke the protocol/);
  });
});

describe('serveSessionInProcess', () => {
  it('runs the programs on one host, each in a fresh guest, until one fails', async () => {
    const driver = createVmDriver();
    const results = await serveSessionInProcess(driver, {
      programs: ['globalThis.left = "behind"', 'typeof left', 'throw new Error("last")', '4'],
    });
    expect(results.map(({ status, value }) => [status, value])).toEqual([
      ['completed', 'behind'],
      ['completed', 'undefined'],
      ['error', undefined],
    ]);
    expect(driver).toMatchObject({ prepared: 3, disposed: 3 });
  });

  it('ends the host after the program that takes it past its budget', async () => {
    const results = await serveSessionInProcess(createVmDriver(), {
      programs: ['1', '2'],
      hostBudget: { cpuSeconds: 0, residentBytes: Number.MAX_SAFE_INTEGER },
    });
    expect(results.map(({ value }) => value)).toEqual([1]);
  });

  it('frees the guest prepared for a next program when the programs run out', async () => {
    const driver = createVmDriver();
    const results = await serveSessionInProcess(driver, { programs: ['1', '2'] });
    expect(results.map(({ value }) => value)).toEqual([1, 2]);
    expect(driver).toMatchObject({ prepared: 3, disposed: 3 });
  });
});
