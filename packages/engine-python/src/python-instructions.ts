import type { EngineInstructionsContext } from '@ghost/code-mode/engine';
import { pythonToolName } from './python-identifier.js';

/** One tool as the model reads it: an `async def` with its description and JSON Schemas. */
function declareTool(tool: {
  identifier: string;
  description: string;
  inputSchema: unknown;
  outputSchema?: unknown;
}): string {
  const lines = [`async def ${pythonToolName(tool.identifier)}(**input) -> ...:`];
  lines.push(`    """${tool.description.trim().replaceAll('"""', '\\"\\"\\"')}`);
  lines.push(`    input (JSON Schema): ${JSON.stringify(tool.inputSchema)}`);
  if (tool.outputSchema !== undefined)
    lines.push(`    returns (JSON Schema): ${JSON.stringify(tool.outputSchema)}`);
  lines.push('    """');
  return lines.join('\n');
}

/**
 * The Python engine's instructions for the model: how to write a program, the guest API, and
 * each tool as an `async def` on `tools` with its JSON Schemas.
 */
export function pythonInstructions(context: EngineInstructionsContext): string {
  const tools = context.catalog.toJSON();
  const declarations = tools.length === 0 ? '# (no tools)' : tools.map(declareTool).join('\n\n');
  return `# Code mode

Solve tasks that need tools by writing one Python program and running it with the exec tool. The program runs in a fresh CPython interpreter (Pyodide, WebAssembly) in a sandbox: nothing survives from one exec to the next, the standard library is there, and there is no network, subprocess, package installation or host file system.

In the program:
- \`await tools.<name>(key=value, ...)\` calls a tool: the keyword arguments are its input (one dict works too). Results are plain JSON: dict, list, str, int, float, bool or None. A failing tool raises \`ToolError\` (catch it to recover).
- \`await tools.call("name", {...})\` calls a tool by name; \`await tools.parallel(lambda: tools.a(x=1), lambda: tools.b(y=2))\` and \`await asyncio.gather(...)\` run calls at once, results in order.
- \`ALL_TOOLS\` lists the tools (name, toolName, description, inputSchema, outputSchema).
- \`print(...)\` and \`text(value)\` (strings as they are, anything else as one line of JSON) write output.
- The value of the last expression is the program's result; \`finish(value)\` (or \`exit(value)\`) ends the program at once with that value.
- Top-level \`await\` works. Values are plain JSON: return data, not sets or objects.
- Limits: ${context.limits.cpuSeconds} s of CPU, ${context.limits.toolCalls} tool calls per program.

exec returns { status, output, value?, error? }. still_working means the program is still running after the observation window: call wait to keep watching, or stop to end it. completed, error and terminated are final; never call wait or stop after them.

The tools (methods of \`tools\`):

\`\`\`python
${declarations}
\`\`\``;
}
