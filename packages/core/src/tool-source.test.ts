import Type from 'typebox';
import { describe, expect, it } from 'vitest';
import { defineAgent } from './agent.js';
import { ConfigurationError } from './errors.js';
import { createRuntime } from './runtime.js';
import { ScriptedModel } from './testing/scripted-model.js';
import { defineTool, type Tool } from './tool.js';
import type { OpenedToolSource, ToolSource } from './tool-source.js';

const runtime = createRuntime();

function answerTool(name: string, answer: string): Tool {
  return defineTool({
    name,
    description: `Answers ${answer}.`,
    input: Type.Object({}),
    execute: () => ({ answer }),
  });
}

/** A source whose tools the test changes, recording what the runs did with it. */
class ChangingSource implements ToolSource {
  readonly kind = 'tool-source';
  readonly name: string;
  tools: Tool[];
  opens = 0;
  closes = 0;
  failure: Error | undefined;
  readonly #listeners = new Set<() => void>();

  constructor(name: string, tools: Tool[]) {
    this.name = name;
    this.tools = tools;
  }

  async open(): Promise<OpenedToolSource> {
    if (this.failure) throw this.failure;
    this.opens += 1;
    const source = this;
    return {
      get tools() {
        return source.tools;
      },
      onChange: (listener) => {
        this.#listeners.add(listener);
        return () => this.#listeners.delete(listener);
      },
      close: async () => {
        this.closes += 1;
        this.#listeners.clear();
      },
    };
  }

  change(tools: Tool[]): void {
    this.tools = tools;
    for (const listener of this.#listeners) listener();
  }
}

describe('tool sources', () => {
  it("opens each source when a run starts, merges its tools with the agent's, and closes it at the end", async () => {
    const source = new ChangingSource('weather', [answerTool('weather_today', 'sunny')]);
    const model = new ScriptedModel([
      { toolCalls: [{ name: 'weather_today', input: {} }] },
      { text: 'Sunny.' },
    ]);
    const agent = defineAgent({ name: 'a', model, tools: [answerTool('clock', 'noon'), source] });
    expect(agent.tools.map((tool) => tool.name)).toEqual(['clock']);
    expect(agent.toolSources).toEqual([source]);
    const run = await agent.ask('Weather?', { runtime });
    expect(run.outcome).toBe('completed');
    expect(model.calls[0]?.tools?.map((tool) => tool.name)).toEqual(['clock', 'weather_today']);
    const result = model.calls[1]?.messages.find((message) => message.role === 'tool');
    expect(result).toMatchObject({ content: '{"answer":"sunny"}' });
    expect([source.opens, source.closes]).toEqual([1, 1]);
  });

  it("gives the model's next turn the tools of a source that changed", async () => {
    const source = new ChangingSource('weather', [answerTool('weather_today', 'sunny')]);
    const changer = defineTool({
      name: 'install_forecast',
      description: 'Adds the forecast tool.',
      input: Type.Object({}),
      execute: () => {
        source.change([answerTool('weather_today', 'sunny'), answerTool('weather_forecast', 'rain')]);
        return 'installed';
      },
    });
    const model = new ScriptedModel([
      { toolCalls: [{ name: 'install_forecast', input: {} }] },
      { toolCalls: [{ name: 'weather_forecast', input: {} }] },
      { text: 'Rain tomorrow.' },
    ]);
    const agent = defineAgent({ name: 'a', model, tools: [changer, source] });
    const run = await agent.ask('Tomorrow?', { runtime });
    expect(run.outcome).toBe('completed');
    expect(model.calls[0]?.tools?.map((tool) => tool.name)).toEqual(['install_forecast', 'weather_today']);
    expect(model.calls[1]?.tools?.map((tool) => tool.name)).toEqual([
      'install_forecast',
      'weather_today',
      'weather_forecast',
    ]);
    const results = model.calls[2]?.messages.filter((message) => message.role === 'tool');
    expect(results?.[1]).toMatchObject({ content: '{"answer":"rain"}' });
  });

  it('fails the run with a ToolSourceError when a source cannot open, and closes those that did', async () => {
    const working = new ChangingSource('working', [answerTool('working_tool', 'ok')]);
    const broken = new ChangingSource('broken', []);
    broken.failure = new Error('connection refused');
    const agent = defineAgent({ name: 'a', model: new ScriptedModel([]), tools: [working, broken] });
    const run = await agent.ask('Hi', { runtime });
    expect(run.outcome).toBe('failed');
    expect((run.error as { code?: string } | undefined)?.code).toBe('TOOL_SOURCE_FAILED');
    expect(run.error?.message).toMatch(/tool source 'broken': connection refused/);
    expect([working.opens, working.closes]).toEqual([1, 1]);
  });

  it("fails the run when a source's tool has the name of another tool", async () => {
    const source = new ChangingSource('dup', [answerTool('clock', 'midnight')]);
    const agent = defineAgent({
      name: 'a',
      model: new ScriptedModel([]),
      tools: [answerTool('clock', 'noon'), source],
    });
    const run = await agent.ask('Hi', { runtime });
    expect(run.outcome).toBe('failed');
    expect((run.error as { code?: string } | undefined)?.code).toBe('TOOL_SOURCE_FAILED');
    expect(run.error?.message).toMatch(
      /Tool 'clock' of tool source 'dup' has the name of a tool of the agent/,
    );
    expect(source.closes).toBe(1);
  });

  it('rejects something that is neither a tool nor a tool source', () => {
    expect(() =>
      defineAgent({ name: 'a', model: new ScriptedModel([]), tools: [{ kind: 'x' } as never] }),
    ).toThrow(ConfigurationError);
  });
});
