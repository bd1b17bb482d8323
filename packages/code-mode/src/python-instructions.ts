import type { EngineInstructionsContext } from './engine.js';
import { guestGlobals } from './guest-api.js';
import { formatContainment } from './program-containment.js';
import { pythonDeclarations } from './python-declarations.js';

/** What a Python engine says about itself in {@link pythonInstructions}. */
export interface PythonInstructionsOptions {
  /** Where each program runs, as the model should read it: `'a fresh Pyodide interpreter'`. */
  readonly interpreter: string;
}

/**
 * The instructions a Python engine that serves the guest API gives the model: how to write a
 * program, what it can use (the Python forms of the guest API's manifest, `guestGlobals`), what
 * is enforced (only what the sandbox really enforces), and the tools as Python declarations
 * ({@link pythonDeclarations}).
 *
 * @example
 * ```ts
 * instructions: (context) => pythonInstructions(context, { interpreter: 'a fresh Pyodide interpreter' }),
 * ```
 */
export function pythonInstructions(
  context: EngineInstructionsContext,
  { interpreter }: PythonInstructionsOptions,
): string {
  const lines = guestGlobals.map((global) => `- ${global.python.instruction}`).join('\n');
  return `# Code mode

Solve tasks that need tools by writing one Python program and running it with the exec tool. The program runs in ${interpreter}: nothing survives from one exec to the next, the standard library is there (json, re, datetime, math, statistics, collections, itertools, asyncio, ...) but no other packages, and there is no network, subprocess or host file system. ${formatContainment(context)}

In the program:
${lines}
- Top-level \`await\` works; do not call \`asyncio.run\`. Values are plain JSON: return dicts, lists, strings, numbers, booleans or None, not objects or sets.

exec returns { status, output, value?, error? }. still_working means the program is still running after the observation window: call wait to keep watching, or stop to end it. completed, error and terminated are final; never call wait or stop after them.

The tools, as Python declarations (a stub to read, not code to run):

\`\`\`python
${pythonDeclarations(context.catalog)}
\`\`\``;
}
