import type { EngineInstructionsContext } from './engine.js';
import { guestInstructionLines } from './guest-api.js';
import { formatContainment } from './program-containment.js';

/** What a JavaScript engine says about itself in {@link javascriptInstructions}. */
export interface JavaScriptInstructionsOptions {
  /** Where each program runs, as the model should read it: `'a fresh V8 isolate'`. */
  readonly interpreter: string;
}

/**
 * The instructions a JavaScript engine that serves the shared guest API gives the model: how to
 * write a program, what it can use (the guest API's manifest, `guestGlobals`), what is enforced (only what the sandbox really enforces), and
 * the tool declarations.
 *
 * @example
 * ```ts
 * instructions: (context) => javascriptInstructions(context, { interpreter: 'a fresh V8 isolate' }),
 * ```
 */
export function javascriptInstructions(
  context: EngineInstructionsContext,
  { interpreter }: JavaScriptInstructionsOptions,
): string {
  return `# Code mode

Solve tasks that need tools by writing one JavaScript program and running it with the exec tool. The program runs in ${interpreter}: nothing survives from one exec to the next, and there is no Node.js, require, fetch, filesystem, timers or process. ${formatContainment(context)}

In the program:
${guestInstructionLines()}
- Top-level \`await\` works. Values are plain JSON: return data, not functions or class instances.

exec returns { status, output, value?, error? }. still_working means the program is still running after the observation window: call wait to keep watching, or stop to end it. completed, error and terminated are final; never call wait or stop after them.

\`\`\`ts
${context.catalog.declarations}
\`\`\``;
}
