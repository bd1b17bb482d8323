import { codeMode } from '@ghost/code-mode';
import { createRuntime, defineAgent, type Run } from '@ghost/core';
import type { ModelToolMessage } from '@ghost/core/provider';
import { ScriptedModel } from '@ghost/core/testing';
import { quickjsEngine } from '@ghost/engine-quickjs';
import { bwrapSandbox } from '@ghost/sandbox-bwrap';
import { describe, expect, it } from 'vitest';
import { mcpServer, mcpTools } from './index.js';
import {
  everythingEntry,
  newMarker,
  processesWith,
  testServerScript,
  waitUntilGone,
} from './test-support/processes.js';

const detection = await bwrapSandbox.detect();
const unavailable = detection.available
  ? ''
  : ` (skipped: bubblewrap is not usable here: ${detection.reason})`;

function execResults(model: ScriptedModel, call: number): unknown[] {
  return (model.calls[call]?.messages ?? [])
    .filter((message): message is ModelToolMessage => message.role === 'tool')
    .map((message) => JSON.parse(message.content));
}

function runtime() {
  return createRuntime({ engines: [quickjsEngine], sandboxes: [bwrapSandbox] });
}

function failed(run: Run): string {
  return run.error ? `${run.error.name}: ${run.error.message}` : '';
}

describe('MCP tools in code mode, in bubblewrap', () => {
  it.skipIf(!detection.available)(
    `a program fans out to several MCP tools with Promise.all and uses their typed structured output${unavailable}`,
    async () => {
      const server = await mcpTools({
        name: 'everything',
        command: process.execPath,
        args: [everythingEntry, 'stdio'],
      });
      try {
        const source = [
          'const [ny, chicago, sum] = await Promise.all([',
          "  tools.everything_get_structured_content({ location: 'New York' }),",
          "  tools.everything_get_structured_content({ location: 'Chicago' }),",
          '  tools.everything_get_sum({ a: 2, b: 3 }),',
          ']);',
          '({ spread: Math.abs(ny.temperature - chicago.temperature), humidity: ny.humidity, conditions: typeof chicago.conditions, sum })',
        ].join('\n');
        const model = new ScriptedModel([
          { toolCalls: [{ name: 'exec', input: { source } }] },
          { text: 'Done.' },
        ]);
        const agent = defineAgent({ name: 'weather', model, tools: [server], codeMode: codeMode() });
        const run = await agent.ask('Compare New York and Chicago.', { runtime: runtime() });
        expect(failed(run)).toBe('');
        expect(run.sandbox?.name).toBe('bwrap');
        // The output schema is the declared return type the model writes against.
        expect(model.calls[0]?.instructions).toMatch(
          /everything_get_structured_content\(args: \{[^}]*location[^}]*\}\): Promise<\{[^}]*temperature: number/,
        );
        const [result] = execResults(model, 1);
        expect(result).toMatchObject({
          status: 'completed',
          value: {
            spread: expect.any(Number),
            humidity: expect.any(Number),
            conditions: 'string',
            sum: expect.stringContaining('5'),
          },
        });
      } finally {
        await server.close();
      }
    },
    60_000,
  );

  it.skipIf(!detection.available)(
    `mcpServer() connects per run, follows a tool-list change into the next program, and ends with the run${unavailable}`,
    async () => {
      const marker = newMarker();
      const model = new ScriptedModel([
        {
          toolCalls: [
            {
              name: 'exec',
              input: { source: "await tools.test_add_tool({ name: 'weather', answer: 'sunny' })" },
            },
          ],
        },
        { toolCalls: [{ name: 'exec', input: { source: '(await tools.test_weather({})).answer' } }] },
        { text: 'Sunny.' },
      ]);
      const agent = defineAgent({
        name: 'assistant',
        model,
        tools: [mcpServer({ name: 'test', command: process.execPath, args: [testServerScript, marker] })],
        codeMode: codeMode(),
      });
      expect(processesWith(marker)).toEqual([]);
      const run = await agent.ask('Weather?', { runtime: runtime() });
      expect(failed(run)).toBe('');
      expect(model.calls[0]?.instructions).not.toContain('test_weather(');
      expect(model.calls[1]?.instructions).toMatch(
        /test_weather\(args\?: Record<string, unknown>\): Promise<\{\s*answer: string;\s*\}>/,
      );
      expect(execResults(model, 2)[1]).toMatchObject({ status: 'completed', value: 'sunny' });
      await waitUntilGone(marker);
    },
    60_000,
  );

  it.skipIf(!detection.available)(
    `with toolPrefix '', reserved names (exit, then call through a list change) are renamed with a warning and the run goes on${unavailable}`,
    async () => {
      const warnings: string[] = [];
      const onWarning = (warning: Error) => warnings.push(warning.message);
      process.on('warning', onWarning);
      const server = await mcpTools({
        name: 'test',
        toolPrefix: '',
        command: process.execPath,
        args: [testServerScript, newMarker()],
        env: { EXTRA_TOOL: 'exit' },
      });
      try {
        const model = new ScriptedModel([
          {
            toolCalls: [
              {
                name: 'exec',
                input: {
                  source:
                    "const first = (await tools._exit({})).answer; await tools.add_tool({ name: 'call', answer: 'called' }); first",
                },
              },
            ],
          },
          {
            toolCalls: [
              {
                name: 'exec',
                input: {
                  source: "(await tools._call({})).answer + ' ' + (await tools.call('exit', {})).answer",
                },
              },
            ],
          },
          { text: 'Done.' },
        ]);
        const agent = defineAgent({ name: 'assistant', model, tools: [server], codeMode: codeMode() });
        const run = await agent.ask('Go.', { runtime: runtime() });
        expect(failed(run)).toBe('');
        expect(run.outcome).toBe('completed');
        expect(model.calls[0]?.instructions).toMatch(/ _exit\(args\?: Record<string, unknown>\)/);
        expect(model.calls[1]?.instructions).toMatch(/ _call\(args\?: Record<string, unknown>\)/);
        const results = execResults(model, 2);
        expect(results[0]).toMatchObject({ status: 'completed', value: 'exit' });
        expect(results[1]).toMatchObject({ status: 'completed', value: 'called exit' });
        expect(warnings).toContain(
          "Agent 'assistant' code mode: tool 'exit' is tools._exit in programs: tools.exit is a name code mode reserves.",
        );
        expect(warnings).toContain(
          "Agent 'assistant' code mode: tool 'call' is tools._call in programs: tools.call is a name code mode reserves.",
        );
      } finally {
        process.off('warning', onWarning);
        await server.close();
      }
    },
    60_000,
  );
});
