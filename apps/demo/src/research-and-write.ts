import { defineWorkflow, type Workflow } from '@ghost/assemblies';
import { type Agent, createRuntime, defineAgent, type ModelV1, type StreamEvent } from '@ghost/core';
import { ScriptedModel } from '@ghost/core/testing';
import { chooseDemoModel } from './demo-model.js';
import { createResearchAgent, createScriptedResearchModel, firstQuestion } from './research-agent.js';

/** The writer's scripted answer: the researcher's facts as a short customer e-mail. */
function createScriptedWriterModel(): ScriptedModel {
  return new ScriptedModel(
    [
      {
        text: [
          'Hello! You can ask for a refund within 30 days of your order, ',
          'and standard shipping takes three to five days. Best regards, Support',
        ],
        delayMs: 15,
        usage: { inputTokens: 96, outputTokens: 31 },
      },
    ],
    { provider: 'scripted', modelId: 'writer-demo' },
  );
}

/** An agent that turns facts into a short, friendly e-mail to a customer. */
function createWriterAgent(model: ModelV1 | string = createScriptedWriterModel()): Agent {
  return defineAgent({
    name: 'writer',
    instructions:
      'You write short, friendly e-mails to customers. Use only the facts you are given, in two sentences, and sign as Support.',
    model,
  });
}

/** Two agents, one run: the researcher (code mode) finds the facts, the writer turns them into an e-mail. */
function createResearchAndWrite(researcher: Agent, writer: Agent): Workflow {
  return defineWorkflow({
    name: 'research-and-write',
    async perform(ctx, question) {
      const facts = await ctx.invoke(researcher, question);
      const email = await ctx.invoke(
        writer,
        `Write an e-mail to a customer who asked: ${question}\nFacts:\n${facts.response}`,
      );
      return email.response;
    },
  });
}

/**
 * Runs the research-and-write workflow once and prints it for a person: each step as it starts and
 * stops, the program the researcher ran (from its nested events), the writer's e-mail as it
 * streams, and a summary with the usage of both agents. Returns the run's outcome.
 */
export async function runResearchAndWrite(
  write: (text: string) => void,
  environment: NodeJS.ProcessEnv = process.env,
): Promise<string> {
  const choice = chooseDemoModel(environment);
  const researcher = createResearchAgent(choice.isScripted ? createScriptedResearchModel() : choice.model);
  const writer = createWriterAgent(choice.isScripted ? createScriptedWriterModel() : choice.model);
  // As in the single-agent run: built-in plugins are imported from the demo's own package.
  const runtime = createRuntime({ importModule: (specifier) => import(specifier) });
  try {
    write(
      '\nTwo agents, one run: a Workflow where the researcher finds the facts and a writer drafts the e-mail.\n\n',
    );
    const stream = createResearchAndWrite(researcher, writer).streamAsk(firstQuestion, {
      runtime,
      includeAgentEvents: true,
    });
    let isMidLine = false;
    for await (const event of stream as AsyncIterable<StreamEvent>) {
      if (event.type === 'assembly_step_start') {
        write(`  [step] ${event.data.step} started\n`);
      } else if (event.type === 'assembly_step_stop') {
        if (isMidLine) write('\n');
        isMidLine = false;
        write(`  [step] ${event.data.step} done in ${Math.round(event.data.durationMs)} ms\n`);
      } else if (event.type === 'assembly_step_error') {
        write(`  [step] ${event.data.step} failed: ${event.data.error.message}\n`);
      } else if (event.type === 'agent_stream') {
        const inner = event.data.event;
        const agent = event.data.source.agentName;
        if (inner.type === 'program_stop') write(`  [${agent}] program ${inner.data.status}\n`);
        if (inner.type === 'text_delta' && agent === 'writer') {
          if (!isMidLine) write('  [writer] ');
          write(inner.data.text);
          isMidLine = true;
        }
      }
    }
    const run = await stream.run;
    write('\n');
    write(`outcome: ${run.outcome}\n`);
    write(
      `steps:   ${(run.result?.steps ?? []).map((step) => `${step.step} (${step.outcome})`).join(', ')}\n`,
    );
    write(
      `usage:   ${run.usage.inputTokens ?? 0} in, ${run.usage.outputTokens ?? 0} out tokens, both agents\n`,
    );
    if (run.error) write(`error:   ${run.error.message}\n`);
    return run.outcome ?? 'failed';
  } finally {
    await runtime.close();
  }
}
