import { createRuntime, type StreamEvent } from '@ghost/core';
import { createSupportAgent } from './support-agent.js';

/** Where the demo writes: stdout in the app, a buffer in tests. */
export type Write = (text: string) => void;

const question = 'How do refunds work, and how fast do you ship?';

function formatMs(milliseconds: number): string {
  return milliseconds < 1000 ? `${milliseconds.toFixed(0)} ms` : `${(milliseconds / 1000).toFixed(2)} s`;
}

function formatUsage(usage: { inputTokens: number | undefined; outputTokens: number | undefined }): string {
  const count = (value: number | undefined) => (value === undefined ? 'not reported' : String(value));
  return `${count(usage.inputTokens)} in, ${count(usage.outputTokens)} out`;
}

/**
 * Runs the support agent once and prints it for a person: the answer as it streams, one line per
 * tool call with its timing, and a summary. Returns the run's outcome.
 */
export async function runDemo(write: Write): Promise<string> {
  const agent = createSupportAgent();
  const runtime = createRuntime();
  const startedAt = performance.now();
  write('Ghost demo: a support agent answering from a help center.\n');
  write('The model is scripted (no API key needed); the tools, run and events are real.\n\n');
  write(`> ${question}\n\n`);

  const stream = agent.streamAsk(question, { runtime });
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
      case 'tool_stop': {
        endLine();
        const mark = event.data.status === 'success' ? 'ok' : 'error';
        write(
          `  [tool] ${event.data.toolName} ${mark} in ${formatMs(event.data.durationMs)}: ${event.data.content}\n`,
        );
        break;
      }
      case 'model_stop':
        endLine();
        break;
    }
  }
  const run = await stream.run;
  write('\n');
  write(`outcome: ${run.outcome}\n`);
  write(`turns:   ${run.result?.turns ?? 0}, tool calls: ${run.result?.toolCalls ?? 0}\n`);
  write(`usage:   ${formatUsage(run.usage)} tokens\n`);
  write(`time:    ${formatMs(performance.now() - startedAt)}\n`);
  if (run.error) write(`error:   ${run.error.message}\n`);
  return run.outcome ?? 'failed';
}
