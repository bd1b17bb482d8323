import { createRuntime, defineTool, type Runtime, type RuntimeOptions, type StreamEvent } from '@ghost/core';
import { bwrapSandbox } from '@ghost/sandbox-bwrap';
import Type from 'typebox';
import { quickjsEngine } from '../quickjs-engine.js';

// What the tests that run agents in code mode share: a QuickJS host in bubblewrap runs every
// program, and each test is skipped, saying why, where bubblewrap cannot be used.

/** Whether bubblewrap can contain programs here, detected once for every test file that imports this. */
export const bwrapDetection = await bwrapSandbox.detect();

/** A suffix for a test's name that says why it was skipped; empty where bubblewrap works. */
export const bwrapUnavailable = bwrapDetection.available
  ? ''
  : ` (skipped: bubblewrap is not usable here: ${bwrapDetection.reason})`;

/** A runtime that runs code mode in QuickJS under bubblewrap. */
export function codeModeRuntime(options: Omit<RuntimeOptions, 'engines' | 'sandboxes'> = {}): Runtime {
  return createRuntime({ ...options, engines: [quickjsEngine], sandboxes: [bwrapSandbox] });
}

/** A tool that returns the help-center entry for a topic. */
export const helpCenterLookup = defineTool({
  name: 'help_center_lookup',
  description: 'Returns the help-center entry for a topic.',
  input: Type.Object({ topic: Type.String() }),
  execute: ({ topic }) => ({ topic, text: `All about ${topic}.` }),
});

/** Every event of a stream, in order. */
export async function collectEvents(stream: AsyncIterable<StreamEvent>): Promise<StreamEvent[]> {
  const events: StreamEvent[] = [];
  for await (const event of stream) events.push(event);
  return events;
}
