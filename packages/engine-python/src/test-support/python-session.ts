import { type CodeModeLimits, type CodeModeSession, openCodeModeSession } from '@ghost/code-mode';
import { defineTool, type Tool, ToolError } from '@ghost/core';
import { bwrapSandbox } from '@ghost/sandbox-bwrap';
import Type from 'typebox';
import { pythonEngine } from '../python-engine.js';

// What the Python engine's tests share: sessions in bubblewrap with real Pyodide hosts, and each
// test skipped, saying why, where bubblewrap cannot be used.

/** Whether bubblewrap can contain programs here, detected once for every test file that imports this. */
export const bwrapDetection = await bwrapSandbox.detect();

/** A suffix for a test's name that says why it was skipped; empty where bubblewrap works. */
export const bwrapUnavailable = bwrapDetection.available
  ? ''
  : ` (skipped: bubblewrap is not usable here: ${bwrapDetection.reason})`;

/** Returns its input. */
const echo = defineTool({
  name: 'echo',
  description: 'Returns its input.',
  input: Type.Object({ text: Type.String() }),
  execute: ({ text }) => ({ text }),
});

/** Always fails, with a message the program sees. */
const failing = defineTool({
  name: 'failing',
  description: 'Always fails.',
  input: Type.Object({}),
  execute: () => {
    throw new ToolError('the warehouse is closed');
  },
});

/** A tool whose identifier is a Python keyword: `tools.import_` in Python. */
const importTool = defineTool({
  name: 'import',
  description: 'Imports a record.',
  input: Type.Object({ id: Type.Number() }),
  execute: ({ id }) => ({ imported: id }),
});

/** Opens a session of the Python engine in bubblewrap; the caller closes it. */
export async function openPythonSession(
  options: { tools?: readonly Tool[]; limits?: Partial<CodeModeLimits> } = {},
): Promise<{ session: CodeModeSession; close: () => Promise<void> }> {
  return openCodeModeSession({
    engine: pythonEngine,
    sandbox: bwrapSandbox,
    tools: [...(options.tools ?? [echo, failing, importTool])],
    ...(options.limits === undefined ? {} : { limits: options.limits }),
  });
}
