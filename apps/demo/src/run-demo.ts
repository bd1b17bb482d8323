import { createRuntime, type SandboxBackendV1, type StreamEvent } from '@ghost/core';
import { openDemoConversation } from './demo-conversation.js';
import { chooseDemoModel } from './demo-model.js';
import { createResearchAgent, firstQuestion, followUpQuestion } from './research-agent.js';

/** Names the sandbox that contained the program and what it enforced, as its own detection reports. */
async function formatSandbox(sandbox: SandboxBackendV1 | undefined): Promise<string> {
  if (sandbox === undefined) return 'none (no program ran)';
  if (sandbox.name === 'unrestricted')
    return "'unrestricted': a plain child process with a cleared environment and a private workspace, no OS sandbox";
  const { checks = [] } = await sandbox.detect();
  const lines = checks.map(
    (check) =>
      `\n    ${check.status === 'enforced' ? 'enforced' : check.status}: ${check.name}, ${check.detail}`,
  );
  return `'${sandbox.name}'${lines.join('')}`;
}

/** Where the demo writes: stdout in the app, a buffer in tests. */
export type Write = (text: string) => void;

function formatMs(milliseconds: number): string {
  return milliseconds < 1000 ? `${milliseconds.toFixed(0)} ms` : `${(milliseconds / 1000).toFixed(2)} s`;
}

function formatUsage(usage: { inputTokens: number | undefined; outputTokens: number | undefined }): string {
  const count = (value: number | undefined) => (value === undefined ? 'not reported' : String(value));
  return `${count(usage.inputTokens)} in, ${count(usage.outputTokens)} out`;
}

function indent(text: string): string {
  return text
    .trimEnd()
    .split('\n')
    .map((line) => (line === '' ? '' : `    ${line}`))
    .join('\n');
}

/**
 * Runs the research agent once in code mode and prints it for a person: the program the model
 * wrote, each tool call the program made (brokered back to this process), the program's result,
 * the answer as it streams, and a summary. The conversation is a session kept in a SQLite file
 * (`GHOST_DEMO_CONVERSATION`, see `demoConversationPath`): the first run asks about the policies, the
 * next ones ask a follow-up the model answers from the conversation. Returns the run's outcome.
 */
export async function runDemo(write: Write, environment: NodeJS.ProcessEnv = process.env): Promise<string> {
  const conversation = await openDemoConversation(environment);
  try {
    return await runDemoTurn(write, environment, conversation);
  } finally {
    await conversation.store.close();
  }
}

async function runDemoTurn(
  write: Write,
  environment: NodeJS.ProcessEnv,
  conversation: Awaited<ReturnType<typeof openDemoConversation>>,
): Promise<string> {
  const isFollowUp = conversation.earlierMessages > 0;
  const question = isFollowUp ? followUpQuestion : firstQuestion;
  const choice = chooseDemoModel(environment, isFollowUp);
  const agent = createResearchAgent(choice.model);
  // Built-in plugins ('quickjs', 'openai') are imported from the application's directory; the demo
  // may run from the repository root, so it imports them from its own package instead.
  const runtime = createRuntime({
    importModule: (specifier) => import(specifier),
    sessionStore: conversation.store,
  });
  const startedAt = performance.now();
  write('Ghost demo: a research agent in code mode.\n');
  write(`${choice.description}\n`);
  write('The program, engine, sandbox, tools and events are real.\n');
  write(
    isFollowUp
      ? `The conversation continues from ${conversation.path} (${conversation.earlierMessages} messages so far); delete the file to start over.\n\n`
      : `The conversation is kept in ${conversation.path}: run the demo again to continue it.\n\n`,
  );
  write(`> ${question}\n\n`);

  const stream = agent.streamAsk(question, { runtime, session: conversation.session });
  let isMidLine = false;
  const endLine = () => {
    if (isMidLine) write('\n');
    isMidLine = false;
  };
  for await (const event of stream as AsyncIterable<StreamEvent>) {
    switch (event.type) {
      case 'text_delta':
        write(event.data.text);
        isMidLine = true;
        break;
      case 'program_start':
        endLine();
        write(
          `  [program] ${event.data.engine} in sandbox '${event.data.sandbox}':\n${indent(event.data.source)}\n`,
        );
        break;
      case 'tool_stop': {
        endLine();
        const mark = event.data.status === 'success' ? 'ok' : 'error';
        const via = event.data.parentToolCallId ? ' (from the program)' : '';
        write(
          `  [tool] ${event.data.toolName}${via} ${mark} in ${formatMs(event.data.durationMs)}: ${event.data.content}\n`,
        );
        break;
      }
      case 'program_stop':
        endLine();
        write(`  [program] ${event.data.status}; output:\n${indent(event.data.output)}\n`);
        if (event.data.error) write(`  [program] error: ${event.data.error}\n`);
        break;
      case 'model_stop':
        endLine();
        break;
    }
  }
  const run = await stream.run;
  await runtime.close();
  write('\n');
  write(`outcome: ${run.outcome}\n`);
  write(`turns:   ${run.result?.turns ?? 0}, tool calls: ${run.result?.toolCalls ?? 0}\n`);
  write(`usage:   ${formatUsage(run.usage)} tokens\n`);
  write(`sandbox: ${await formatSandbox(run.sandbox)}\n`);
  write(`time:    ${formatMs(performance.now() - startedAt)}\n`);
  write(
    `session: '${conversation.session.id}' of ${conversation.session.actor}, ${run.session?.messageCount ?? 0} messages in ${conversation.path}\n`,
  );
  if (run.error) write(`error:   ${run.error.message}\n`);
  return run.outcome ?? 'failed';
}
