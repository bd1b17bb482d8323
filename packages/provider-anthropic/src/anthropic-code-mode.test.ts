import { codeMode } from '@ghost/code-mode';
import { createRuntime, defineAgent, defineTool, type StreamEvent } from '@ghost/core';
import { bwrapSandbox } from '@ghost/sandbox-bwrap';
import Type from 'typebox';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createAnthropic } from './anthropic-provider.js';
import { answer, MessagesServer } from './test-support/messages-server.js';

const detection = await bwrapSandbox.detect();
const unavailable = detection.available
  ? ''
  : ` (skipped: bubblewrap is not usable here: ${detection.reason})`;

let server: MessagesServer;

beforeEach(async () => {
  server = await MessagesServer.start();
});

afterEach(async () => {
  await server.close();
});

const population = defineTool({
  name: 'population',
  description: 'The population of a city.',
  input: Type.Object({ city: Type.String() }),
  execute: async ({ city }) => ({ city, people: city === 'Paris' ? 2_100_000 : 700_000 }),
});

const weather = defineTool({
  name: 'weather',
  description: 'The weather in a city.',
  input: Type.Object({ city: Type.String() }),
  execute: async ({ city }) => ({ city, sky: city === 'Oslo' ? 'snow' : 'sun' }),
});

const program = [
  'const [paris, oslo] = await Promise.all([',
  "  tools.population({ city: 'Paris' }),",
  "  tools.weather({ city: 'Oslo' }),",
  ']);',
  '({ people: paris.people, sky: oslo.sky })',
].join('\n');

describe('code mode on Anthropic', () => {
  it.skipIf(!detection.available)(
    `runs the exec program the model sent in QuickJS inside bubblewrap and returns its result${unavailable}`,
    async () => {
      server.enqueue(
        answer([
          { type: 'thinking', deltas: ['Both at once.'], signature: 'sig-exec==' },
          // The program's JSON arrives in pieces, as the API streams tool input.
          {
            type: 'tool_use',
            id: 'toolu_exec',
            name: 'exec',
            json: (() => {
              const text = JSON.stringify({ source: program });
              return [text.slice(0, 17), text.slice(17, 60), text.slice(60)];
            })(),
          },
        ]),
        answer([{ type: 'text', deltas: ['Paris has 2.1 million people; Oslo has snow.'] }]),
      );
      const agent = defineAgent({
        name: 'cities',
        instructions: 'Use code to answer.',
        model: createAnthropic({ apiKey: 'test-key', baseURL: server.baseURL })('claude-sonnet-4-5'),
        tools: [population, weather],
        codeMode: codeMode(),
      });
      // Engine 'quickjs' and sandbox 'native' resolve from this package's dependencies.
      const runtime = createRuntime({ importModule: (specifier) => import(specifier) });
      const stream = agent.streamAsk('How many people live in Paris, and what is the sky in Oslo?', {
        runtime,
      });
      const events: StreamEvent[] = [];
      for await (const event of stream) events.push(event);
      const run = await stream.run;

      expect(run.error).toBeUndefined();
      expect(run.outcome).toBe('completed');
      expect(run.response).toBe('Paris has 2.1 million people; Oslo has snow.');
      expect(run.sandbox?.name).toBe('bwrap');
      const brokered = events.flatMap((event) =>
        event.type === 'tool_start' ? [(event.data as { toolName: string }).toolName] : [],
      );
      expect(brokered.sort()).toEqual(['population', 'weather']);

      const first = server.requests[0]?.body;
      expect(first.tools.map((tool: { name: string }) => tool.name)).toEqual(['exec', 'wait', 'stop']);
      expect(first.system[0].text).toContain('population(args: {');

      const second = server.requests[1]?.body;
      const [result] = second.messages[2].content;
      expect(result).toMatchObject({ type: 'tool_result', tool_use_id: 'toolu_exec' });
      expect(JSON.parse(result.content)).toMatchObject({
        status: 'completed',
        value: { people: 2_100_000, sky: 'snow' },
      });
      expect(second.messages[1].content.at(-1)).toEqual({
        type: 'tool_use',
        id: 'toolu_exec',
        name: 'exec',
        input: { source: program },
      });
    },
  );
});
