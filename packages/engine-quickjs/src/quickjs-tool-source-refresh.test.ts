import { codeMode } from '@ghost/code-mode';
import { createRuntime, defineAgent, defineTool, type Tool, type ToolSource } from '@ghost/core';
import type { OpenedToolSource } from '@ghost/core/plugin';
import { ScriptedModel } from '@ghost/core/testing';
import Type from 'typebox';
import { describe, expect, it } from 'vitest';
import { quickjsEngine } from './quickjs-engine.js';

function answerTool(name: string, answer: string): Tool {
  return defineTool({
    name,
    description: `Answers ${answer}.`,
    input: Type.Object({}),
    output: Type.Object({ answer: Type.String() }),
    execute: () => ({ answer }),
  });
}

/** A source whose tools the test changes while the run goes on. */
function changingSource(initial: Tool[]) {
  let tools = initial;
  const listeners = new Set<() => void>();
  let closes = 0;
  const source: ToolSource = {
    kind: 'tool-source',
    name: 'weather',
    async open(): Promise<OpenedToolSource> {
      return {
        get tools() {
          return tools;
        },
        onChange(listener) {
          listeners.add(listener);
          return () => listeners.delete(listener);
        },
        async close() {
          closes += 1;
        },
      };
    },
  };
  return {
    source,
    change(next: Tool[]) {
      tools = next;
      for (const listener of listeners) listener();
    },
    get closes() {
      return closes;
    },
  };
}

describe('code mode with a tool source that changes', () => {
  it('gives the next program, and the next model turn, the new catalog; a running program keeps its own', async () => {
    const weather = changingSource([answerTool('weather_today', 'sunny')]);
    const install = defineTool({
      name: 'install_forecast',
      description: 'Adds the forecast tool.',
      input: Type.Object({}),
      execute: () => {
        weather.change([answerTool('weather_today', 'sunny'), answerTool('weather_forecast', 'rain')]);
        return 'installed';
      },
    });
    const model = new ScriptedModel([
      {
        toolCalls: [
          {
            name: 'exec',
            input: {
              source: "await tools.install_forecast({}); ALL_TOOLS.map((tool) => tool.name).join(',')",
            },
          },
        ],
      },
      {
        toolCalls: [
          {
            name: 'exec',
            input: {
              source:
                '(await tools.weather_forecast({})).answer + "/" + (await tools.weather_today({})).answer',
            },
          },
        ],
      },
      { text: 'Rain tomorrow.' },
    ]);
    const agent = defineAgent({
      name: 'forecaster',
      model,
      tools: [install, weather.source],
      codeMode: codeMode({ engine: quickjsEngine, sandbox: 'unrestricted' }),
    });
    const run = await agent.ask('Tomorrow?', { runtime: createRuntime() });
    expect(run.error).toBeUndefined();
    expect(run.outcome).toBe('completed');
    const results = (model.calls[2]?.messages ?? []).filter((message) => message.role === 'tool');
    // The first program started with the old catalog and kept it after the change.
    expect(JSON.parse((results[0] as { content: string }).content)).toMatchObject({
      status: 'completed',
      value: 'install_forecast,weather_today',
    });
    expect(JSON.parse((results[1] as { content: string }).content)).toMatchObject({
      status: 'completed',
      value: 'rain/sunny',
    });
    const before = model.calls[0]?.instructions ?? '';
    const after = model.calls[1]?.instructions ?? '';
    expect(before).toContain('weather_today(');
    expect(before).not.toContain('weather_forecast(');
    expect(after).toMatch(/weather_forecast\(.*\): Promise<\{[^}]*answer: string/);
    expect(weather.closes).toBe(1);
  }, 60_000);
});

describe('code mode settings with tool sources', () => {
  it('accepts an except name that only a tool source will provide, and checks it when the run starts', () => {
    const weather = changingSource([]);
    expect(() =>
      defineAgent({
        name: 'a',
        model: new ScriptedModel([]),
        tools: [weather.source],
        codeMode: codeMode({ except: ['weather_today'] }),
      }),
    ).not.toThrow();
  });
});
