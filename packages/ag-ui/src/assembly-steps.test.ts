import { type Event as AgUiEvent, EventType } from '@ag-ui/core';
import { defineWorkflow } from '@ghost/assemblies';
import { defineAgent } from '@ghost/core';
import { MockModel, ScriptedModel } from '@ghost/core/testing';
import { describe, expect, it } from 'vitest';
import { checkedEvents, ofType } from './test-support/checked-events.js';
import { toAgUiEvents } from './to-ag-ui-events.js';

async function collect(iterable: AsyncIterable<AgUiEvent>): Promise<AgUiEvent[]> {
  const events: AgUiEvent[] = [];
  for await (const event of iterable) events.push(event);
  return events;
}

function researcherAnswering(...answers: string[]) {
  return defineAgent({
    name: 'researcher',
    model: new ScriptedModel(answers.map((text) => ({ text: [text.slice(0, 3), text.slice(3)] }))),
  });
}

describe('an assembly run as AG-UI events', () => {
  it('shows each step as an AG-UI step, parallel ones overlapping, with its agent as a subagent attributed to it', async () => {
    const researcher = researcherAnswering('Facts about Lisbon.', 'Quotes about Lisbon.');
    const writer = defineAgent({ name: 'writer', model: new ScriptedModel([{ text: 'A short piece.' }]) });
    const pipeline = defineWorkflow({
      name: 'research-and-write',
      async perform(ctx, topic) {
        const [facts, quotes] = await ctx.parallel([
          ctx.invoke(researcher, `Facts on ${topic}`),
          ctx.invoke(researcher, `Quotes on ${topic}`),
        ]);
        return (await ctx.invoke(writer, `${facts?.response} ${quotes?.response}`)).response;
      },
    });
    const stream = pipeline.streamAsk('Lisbon', { includeAgentEvents: true });
    const events = await checkedEvents(await collect(toAgUiEvents(stream, { threadId: 'thread-1' })));
    expect((await stream.run).outcome).toBe('completed');

    const started = ofType(events, EventType.STEP_STARTED);
    const finished = ofType(events, EventType.STEP_FINISHED);
    expect(started.map((event) => event.stepName)).toEqual(['researcher#1', 'researcher#2', 'writer#3']);
    expect(finished.map((event) => event.stepName).sort()).toEqual([
      'researcher#1',
      'researcher#2',
      'writer#3',
    ]);
    expect(started[2]?.metadata).toEqual({
      ghost: {
        assemblyName: 'research-and-write',
        step: 'writer',
        stepId: '3',
        agentName: 'writer',
        attempt: 1,
        path: ['step:writer'],
      },
    });
    // The two research steps overlap: both start before either finishes.
    const indexOf = (event: AgUiEvent) => events.indexOf(event);
    const firstResearchFinish = Math.min(
      ...finished.filter((event) => event.stepName.startsWith('researcher')).map(indexOf),
    );
    expect(indexOf(started[1] as AgUiEvent)).toBeLessThan(firstResearchFinish);

    // Each step's agent is a subagent naming its step, and its text is attributed to it.
    const subagents = ofType(events, EventType.SUBAGENT_STARTED);
    expect(subagents.map((event) => [event.name, event.metadata?.ghost?.stepName])).toEqual([
      ['researcher', 'researcher#1'],
      ['researcher', 'researcher#2'],
      ['writer', 'writer#3'],
    ]);
    const writerRun = subagents[2]?.subagentRunId;
    const writerText = ofType(events, EventType.TEXT_MESSAGE_CONTENT)
      .filter((event) => event.subagentRunId === writerRun)
      .map((event) => event.delta)
      .join('');
    expect(writerText).toBe('A short piece.');
    expect(ofType(events, EventType.RUN_FINISHED)).toHaveLength(1);
  });

  it('finishes a failed step with its error in metadata.ghost and ends the run with RUN_ERROR', async () => {
    const failing = defineAgent({
      name: 'checker',
      model: new MockModel({
        // biome-ignore lint/correctness/useYield: a model that fails before its first part
        stream: async function* () {
          throw new Error('connection reset');
        },
      }),
    });
    const pipeline = defineWorkflow({
      name: 'check',
      async perform(ctx, input) {
        return (await ctx.invoke(failing, input)).response;
      },
    });
    const events = await checkedEvents(
      await collect(toAgUiEvents(pipeline.streamAsk('Check it.'), { threadId: 'thread-1' })),
    );
    const [finished] = ofType(events, EventType.STEP_FINISHED);
    expect(finished?.stepName).toBe('checker#1');
    expect(finished?.metadata?.ghost?.error?.message).toContain('connection reset');
    expect(ofType(events, EventType.RUN_ERROR)).toHaveLength(1);
  });
});
