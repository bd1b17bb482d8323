import { ConfigurationError, defineAgent, type StreamEvent } from '@ghost/core';
import { ScriptedModel, type ScriptedStep } from '@ghost/core/testing';
import { describe, expect, it } from 'vitest';
import { AssemblyLimitError, AssemblyRoutingError, AssemblyStepTimeoutError } from './assembly-errors.js';
import { defineGraph } from './graph.js';
import { defineWorkflow } from './workflow.js';

async function collect(stream: AsyncIterable<StreamEvent>): Promise<StreamEvent[]> {
  const events: StreamEvent[] = [];
  for await (const event of stream) events.push(event);
  return events;
}

const usage = { inputTokens: 10, outputTokens: 5 };

function agent(name: string, steps: readonly ScriptedStep[]) {
  const model = new ScriptedModel(steps);
  return { agent: defineAgent({ name, model }), model };
}

/** The text of the last user message the model was sent. */
function lastInput(model: ScriptedModel, call = 0): string {
  const message = model.calls[call]?.messages.at(-1);
  return JSON.stringify(message?.content);
}

/** The assembly events of a stream, as short strings. */
function assemblyEvents(events: readonly StreamEvent[]): string[] {
  return events.flatMap((event) => {
    const data = event.data as Record<string, unknown>;
    switch (event.type) {
      case 'assembly_step_start':
      case 'assembly_step_stop':
      case 'assembly_step_error':
        return [`${event.type.slice('assembly_'.length)} ${String(data.step)}`];
      case 'assembly_transition':
        return [`${String(data.kind)} ${String(data.from)}->${String(data.to)}`];
      case 'assembly_fork':
        return [`fork ${String(data.from)}->${(data.to as string[]).join(',')}`];
      case 'assembly_join':
        return [`join ${(data.from as string[]).join(',')}->${String(data.node)}`];
      default:
        return [];
    }
  });
}

describe('defineGraph', () => {
  it('runs a linear graph: response of the finish node, usage summed, the steps recorded, events in order', async () => {
    const research = agent('researcher', [{ text: 'facts', usage }]);
    const write = agent('writer', [{ text: 'draft', usage }]);
    const graph = defineGraph({
      name: 'article',
      nodes: { research: research.agent, write: write.agent },
      start: 'research',
      edges: [{ from: 'research', to: 'write' }],
      finish: ['write'],
    });
    const stream = graph.streamAsk('Lisbon');
    const events = await collect(stream);
    const run = await stream.run;
    expect(run.outcome).toBe('completed');
    expect(run.response).toBe('draft');
    expect(run.usage.inputTokens).toBe(20);
    expect(run.usage.outputTokens).toBe(10);
    expect(lastInput(write.model)).toContain('facts');
    expect(
      run.result?.steps?.map((step) => [step.step, step.agentName, step.outcome, step.response]),
    ).toEqual([
      ['research', 'researcher', 'completed', 'facts'],
      ['write', 'writer', 'completed', 'draft'],
    ]);
    expect(assemblyEvents(events)).toEqual([
      'step_start research',
      'step_stop research',
      'edge research->write',
      'step_start write',
      'step_stop write',
    ]);
    expect(events.at(-1)?.type).toBe('run_stop');
  });

  it('takes the conditional edge whose when matches', async () => {
    const classify = agent('classifier', [{ text: 'topic: billing' }]);
    const billing = agent('billing', [{ text: 'refund issued' }]);
    const tech = agent('tech', []);
    const graph = defineGraph({
      name: 'support',
      nodes: { classify: classify.agent, billing: billing.agent, tech: tech.agent },
      start: 'classify',
      edges: [
        { from: 'classify', to: 'tech', when: (result) => result.response.includes('tech') },
        { from: 'classify', to: 'billing', when: (result) => result.response.includes('billing') },
      ],
    });
    const run = await graph.ask('my invoice is wrong');
    expect(run.outcome).toBe('completed');
    expect(run.response).toBe('refund issued');
    expect(tech.model.calls).toHaveLength(0);
  });

  it('maps an edge input from the result and the state', async () => {
    const research = agent('researcher', [{ text: 'facts' }]);
    const write = agent('writer', [{ text: 'draft' }]);
    const graph = defineGraph({
      name: 'mapped',
      nodes: { research: research.agent, write: write.agent },
      start: 'research',
      edges: [
        {
          from: 'research',
          to: 'write',
          input: (result, state) =>
            `Write about ${state.input} from: ${result.response} (step ${state.steps})`,
        },
      ],
    });
    const run = await graph.ask('Lisbon');
    expect(run.response).toBe('draft');
    expect(lastInput(write.model)).toContain('Write about Lisbon from: facts (step 1)');
  });

  it('forks, routes a failed branch along its error edge, and joins both inputs as labelled sections', async () => {
    const plan = agent('planner', [{ text: 'plan', usage }]);
    const facts = agent('facts', [{ text: 'F1', usage }]);
    const quotes = agent('quotes', []); // its model has no answer: the step fails
    const write = agent('writer', [{ text: 'article', usage }]);
    const graph = defineGraph({
      name: 'fork-join',
      nodes: { plan: plan.agent, facts: facts.agent, quotes: quotes.agent, write: write.agent },
      start: 'plan',
      edges: [
        { from: 'plan', to: 'facts' },
        { from: 'plan', to: 'quotes' },
        { from: 'facts', to: 'write' },
      ],
      errorEdges: [{ from: 'quotes', to: 'write' }],
      finish: ['write'],
    });
    const stream = graph.streamAsk('Lisbon');
    const events = await collect(stream);
    const run = await stream.run;
    expect(run.outcome).toBe('completed');
    expect(run.response).toBe('article');
    expect(run.usage.inputTokens).toBe(30);
    expect(write.model.calls).toHaveLength(1);
    const text = lastInput(write.model);
    expect(text).toContain('## facts');
    expect(text).toContain('F1');
    expect(text).toContain('## quotes');
    expect(text).toContain("Node 'quotes' failed:");
    expect(text.indexOf('## facts')).toBeLessThan(text.indexOf('## quotes'));

    const seen = assemblyEvents(events);
    expect(seen.slice(0, 5)).toEqual([
      'step_start plan',
      'step_stop plan',
      'fork plan->facts,quotes',
      'edge plan->facts',
      'edge plan->quotes',
    ]);
    expect(seen).toContain('error_edge quotes->write');
    expect(seen).toContain('step_error quotes');
    expect(seen.slice(-3)).toEqual(['join facts,quotes->write', 'step_start write', 'step_stop write']);
    const fork = events.find((event) => event.type === 'assembly_fork');
    expect(fork?.data).toMatchObject({ assemblyName: 'fork-join', from: 'plan', to: ['facts', 'quotes'] });
    expect(run.result?.steps?.find((step) => step.step === 'quotes')?.outcome).toBe('failed');
  });

  it('a join runs with the branches that came when another branch went elsewhere', async () => {
    const start = agent('start', [{ text: 'go' }]);
    const left = agent('left', [{ text: 'L' }]);
    const right = agent('right', [{ text: 'skip' }]);
    const side = agent('side', [{ text: 'side done' }]);
    const join = agent('join', [{ text: 'joined' }]);
    const graph = defineGraph({
      name: 'partial-join',
      nodes: { start: start.agent, left: left.agent, right: right.agent, side: side.agent, join: join.agent },
      start: 'start',
      edges: [
        { from: 'start', to: 'left' },
        { from: 'start', to: 'right' },
        { from: 'left', to: 'join' },
        { from: 'right', to: 'join', when: (result) => result.response !== 'skip' },
        { from: 'right', to: 'side', when: (result) => result.response === 'skip' },
        { from: 'side', to: 'join', when: () => false },
        { from: 'side', to: 'join' },
      ],
      finish: ['join'],
    });
    const events = await collect(graph.streamAsk('x'));
    expect(assemblyEvents(events)).toContain('join left,side->join');
    expect(lastInput(join.model)).toContain('## left');
    expect(lastInput(join.model)).toContain('## side');
  });

  it('ends when a finish node completes, stopping the branches still running', async () => {
    const start = agent('start', [{ text: 'go' }]);
    const fast = agent('fast', [{ text: 'quick answer' }]);
    const slow = agent('slow', [{ text: ['a', 'b', 'c'], delayMs: 200 }]);
    const graph = defineGraph({
      name: 'race',
      nodeOptions: { slow: { retries: 2 } },
      nodes: { start: start.agent, fast: fast.agent, slow: slow.agent },
      start: 'start',
      edges: [
        { from: 'start', to: 'fast' },
        { from: 'start', to: 'slow' },
      ],
      finish: ['fast', 'slow'],
    });
    const stream = graph.streamAsk('x');
    const events = await collect(stream);
    const run = await stream.run;
    expect(run.outcome).toBe('completed');
    expect(run.response).toBe('quick answer');
    // The stopped branch is not retried.
    expect(assemblyEvents(events).filter((event) => event.endsWith(' slow'))).toEqual([
      'step_start slow',
      'step_error slow',
    ]);
    expect(events.at(-1)?.type).toBe('run_stop');
  });

  it('goes on from a finish node whose conditional edge matches: a review sends the draft back once', async () => {
    const write = agent('writer', [{ text: 'draft 1' }, { text: 'draft 2' }]);
    const review = agent('reviewer', [{ text: 'REVISE: shorter' }, { text: 'APPROVED' }]);
    const graph = defineGraph({
      name: 'article',
      nodes: { write: write.agent, review: review.agent },
      start: 'write',
      edges: [
        { from: 'write', to: 'review' },
        { from: 'review', to: 'write', when: (result) => result.response.startsWith('REVISE') },
      ],
      finish: ['review'],
    });
    const run = await graph.ask('Lisbon');
    expect(run.outcome).toBe('completed');
    expect(run.response).toBe('APPROVED');
    expect(run.result?.steps?.map((step) => step.step)).toEqual(['write', 'review', 'write', 'review']);
    expect(lastInput(write.model, 1)).toContain('REVISE: shorter');
  });

  it('fails with an AssemblyRoutingError when no edge of a non-finish node matches', async () => {
    const classify = agent('classifier', [{ text: 'unknown' }]);
    const billing = agent('billing', []);
    const graph = defineGraph({
      name: 'routing',
      nodes: { classify: classify.agent, billing: billing.agent },
      start: 'classify',
      edges: [{ from: 'classify', to: 'billing', when: (result) => result.response === 'billing' }],
    });
    const run = await graph.ask('x');
    expect(run.outcome).toBe('failed');
    expect(run.error).toBeInstanceOf(AssemblyRoutingError);
    expect(run.error?.message).toMatch(/no edge from node 'classify' matched/);
    expect(run.error?.message).toMatch(/finish/);
  });

  it('fails with the node error when a node without an error edge fails', async () => {
    const broken = agent('broken', []);
    const graph = defineGraph({
      name: 'plain-failure',
      nodes: { broken: broken.agent },
      start: 'broken',
      edges: [],
    });
    const run = await graph.ask('x');
    expect(run.outcome).toBe('failed');
    expect(run.error?.name).toBe('ScriptedModelError');
  });

  it('fails with the error a when function throws, stopping the other branches', async () => {
    const start = agent('start', [{ text: 'go' }]);
    const slow = agent('slow', [{ text: ['a', 'b'], delayMs: 200 }]);
    const fast = agent('fast', [{ text: 'x' }]);
    const graph = defineGraph({
      name: 'throwing',
      nodes: { start: start.agent, slow: slow.agent, fast: fast.agent, end: agent('end', []).agent },
      start: 'start',
      edges: [
        { from: 'start', to: 'slow' },
        { from: 'start', to: 'fast' },
        {
          from: 'fast',
          to: 'end',
          when: () => {
            throw new Error('bad condition');
          },
        },
        { from: 'slow', to: 'end' },
      ],
    });
    const stream = graph.streamAsk('x');
    const events = await collect(stream);
    const run = await stream.run;
    expect(run.outcome).toBe('failed');
    expect(run.error?.message).toBe('bad condition');
    expect(assemblyEvents(events)).toContain('step_error slow');
  });

  it('stops a cycle with an AssemblyLimitError past maxSteps', async () => {
    const loop = Array.from({ length: 10 }, () => ({ text: 'again' }));
    const write = agent('writer', loop);
    const review = agent('reviewer', loop);
    const done = agent('done', []);
    const graph = defineGraph({
      name: 'cycle',
      nodes: { write: write.agent, review: review.agent, done: done.agent },
      start: 'write',
      edges: [
        { from: 'write', to: 'review' },
        { from: 'review', to: 'write', when: (result) => result.response === 'again' },
        { from: 'review', to: 'done', when: (result) => result.response === 'ok' },
      ],
      finish: ['done'],
      maxSteps: 5,
    });
    const stream = graph.streamAsk('x');
    const events = await collect(stream);
    const run = await stream.run;
    expect(run.outcome).toBe('failed');
    expect(run.error).toBeInstanceOf(AssemblyLimitError);
    expect(run.error).toMatchObject({ limit: 'maxSteps', value: 5 });
    expect(run.error?.message).toMatch(/past its maxSteps of 5/);
    expect(events.filter((event) => event.type === 'assembly_step_start')).toHaveLength(5);
    expect(write.model.calls.length + review.model.calls.length).toBe(5);
  });

  it('a node timeout takes the error edge', async () => {
    const slow = agent('slow', [{ text: ['a', 'b'], delayMs: 500 }]);
    const fallback = agent('fallback', [{ text: 'fallback answer' }]);
    const graph = defineGraph({
      name: 'timeout',
      nodes: { slow: slow.agent, fallback: fallback.agent },
      start: 'slow',
      edges: [],
      errorEdges: [
        { from: 'slow', to: 'fallback', input: (error) => `recover from ${(error as Error).name}` },
      ],
      finish: ['slow', 'fallback'],
      nodeOptions: { slow: { timeoutMs: 20 } },
    });
    const events = await collect(graph.streamAsk('x'));
    const stepError = events.find((event) => event.type === 'assembly_step_error');
    expect(stepError?.data).toMatchObject({ step: 'slow', error: { code: 'ASSEMBLY_STEP_TIMEOUT' } });
    expect(lastInput(fallback.model)).toContain(`recover from ${AssemblyStepTimeoutError.name}`);
    expect(events.at(-1)?.type).toBe('run_stop');
  });

  it('cancelling mid-fork stops every branch and ends the run as cancelled', async () => {
    const controller = new AbortController();
    const slow = (name: string) => agent(name, [{ text: ['a', 'b', 'c'], delayMs: 200 }]).agent;
    const graph = defineGraph({
      name: 'cancel',
      nodes: { start: agent('start', [{ text: 'go' }]).agent, a: slow('a'), b: slow('b'), c: slow('c') },
      start: 'start',
      edges: [
        { from: 'start', to: 'a' },
        { from: 'start', to: 'b' },
        { from: 'start', to: 'c' },
      ],
      maxConcurrency: 2,
    });
    const stream = graph.streamAsk('x', { signal: controller.signal });
    const events: StreamEvent[] = [];
    for await (const event of stream) {
      events.push(event);
      if (
        event.type === 'assembly_step_start' &&
        events.filter((e) => e.type === 'assembly_step_start').length === 3
      ) {
        controller.abort();
      }
    }
    const run = await stream.run;
    expect(run.outcome).toBe('cancelled');
    // At most two branches ran at once; both were stopped and the third never started.
    expect(events.filter((event) => event.type === 'assembly_step_start')).toHaveLength(3);
    expect(events.filter((event) => event.type === 'assembly_step_error')).toHaveLength(2);
    expect(events.at(-1)?.type).toBe('run_cancel');
  });

  it('runs nested in a workflow, and a workflow runs nested as a node', async () => {
    const research = agent('researcher', [{ text: 'facts', usage }]);
    const write = agent('writer', [{ text: 'draft', usage }]);
    const polish = agent('polisher', [{ text: 'polished', usage }]);
    const inner = defineWorkflow({
      name: 'inner',
      perform: async (ctx, input) => ctx.invoke(write.agent, input),
    });
    const graph = defineGraph({
      name: 'graph',
      nodes: { research: research.agent, write: inner },
      start: 'research',
      edges: [{ from: 'research', to: 'write' }],
    });
    const outer = defineWorkflow({
      name: 'outer',
      async perform(ctx, topic) {
        const draft = await ctx.invoke(graph, topic);
        return ctx.invoke(polish.agent, draft.response);
      },
    });
    const run = await outer.ask('Lisbon');
    expect(run.outcome).toBe('completed');
    expect(run.response).toBe('polished');
    expect(run.usage.inputTokens).toBe(30);
    const steps = run.result?.steps ?? [];
    expect(steps.find((step) => step.step === 'research')?.path).toEqual([
      'step:graph',
      'graph',
      'step:research',
    ]);
    expect(steps.find((step) => step.step === 'writer')?.path).toEqual([
      'step:graph',
      'graph',
      'step:write',
      'inner',
      'step:writer',
    ]);
  });

  it('draws itself as Mermaid', () => {
    const nodes = {
      research: agent('r', []).agent,
      write: agent('w', []).agent,
      fix: agent('f', []).agent,
    };
    const graph = defineGraph({
      name: 'drawn',
      nodes,
      start: 'research',
      edges: [
        { from: 'research', to: 'write', when: () => true },
        { from: 'fix', to: 'write', label: 'retry "once"' },
      ],
      errorEdges: [{ from: 'research', to: 'fix' }],
      finish: ['write'],
    });
    expect(graph.kind).toBe('graph');
    expect(graph.toMermaid()).toBe(
      [
        'flowchart TD',
        '  start(((start)))',
        '  n0["research"]',
        '  n1[["write"]]',
        '  n2["fix"]',
        '  start --> n0',
        '  n0 -->|"when"| n1',
        '  n2 -->|"retry #quot;once#quot;"| n1',
        '  n0 -. error .-> n2',
      ].join('\n'),
    );
  });

  it('rejects a wrong definition with a ConfigurationError that says what to fix', () => {
    const a = agent('a', []).agent;
    const b = agent('b', []).agent;
    const base = { name: 'g', nodes: { a, b }, start: 'a', edges: [{ from: 'a', to: 'b' }] } as const;
    const cases: [unknown, RegExp, string][] = [
      [{ ...base, start: 'c' }, /start names node 'c'/, 'CONFIGURATION_INVALID'],
      [
        { ...base, edges: [{ from: 'a', to: 'z' }] },
        /edges\[0\]\.to names node 'z'/,
        'CONFIGURATION_INVALID',
      ],
      [{ ...base, finish: ['z'] }, /finish\[0\] names node 'z'/, 'CONFIGURATION_INVALID'],
      [
        { ...base, errorEdges: [{ from: 'y', to: 'b' }] },
        /errorEdges\[0\]\.from names node 'y'/,
        'CONFIGURATION_INVALID',
      ],
      [{ ...base, nodes: { a, b: {} } }, /node 'b' is not an agent/, 'CONFIGURATION_INVALID'],
      [{ ...base, retries: 2 }, /has no option 'retries'/, 'OPTION_UNKNOWN'],
      [{ ...base, edges: [{ from: 'a', to: 'b', if: () => true }] }, /has no option 'if'/, 'OPTION_UNKNOWN'],
      [{ ...base, maxSteps: 0 }, /maxSteps = 0/, 'CONFIGURATION_INVALID'],
      [{ ...base, maxConcurrency: 1.5 }, /maxConcurrency = 1.5/, 'CONFIGURATION_INVALID'],
      [
        { ...base, nodeOptions: { a: { timeoutMs: -1 } } },
        /nodeOptions\.a\.timeoutMs = -1/,
        'CONFIGURATION_INVALID',
      ],
      [{ ...base, nodeOptions: { a: { tries: 1 } } }, /has no option 'tries'/, 'OPTION_UNKNOWN'],
      [
        {
          ...base,
          errorEdges: [
            { from: 'a', to: 'b' },
            { from: 'a', to: 'a' },
          ],
        },
        /two error edges/,
        'CONFIGURATION_INVALID',
      ],
      [
        { ...base, edges: [...base.edges, { from: 'b', to: 'a' }] },
        /no finish node/,
        'CONFIGURATION_INVALID',
      ],
      [{ ...base, name: '' }, /non-empty name/, 'AGENT_NAME_INVALID'],
    ];
    for (const [definition, message, code] of cases) {
      let thrown: unknown;
      try {
        defineGraph(definition as never);
      } catch (error) {
        thrown = error;
      }
      expect(thrown, String(message)).toBeInstanceOf(ConfigurationError);
      expect((thrown as ConfigurationError).message).toMatch(message);
      expect((thrown as ConfigurationError).code).toBe(code);
    }
  });
});
