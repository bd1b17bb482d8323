import { type Node, parse } from 'acorn';

/** The source ready for the engine, or the syntax error the model must fix. */
export type PreparedSource =
  | { readonly ok: true; readonly source: string }
  | { readonly ok: false; readonly error: string };

interface Located extends Node {
  readonly type: string;
}

/**
 * Parses a program and rewrites its final expression statement into `return (...)`, so its value
 * becomes the completed value, as a REPL would show it. The rewrite splices the original text at
 * AST offsets (no string guessing), and keeps every line where it was so error positions match.
 * Top-level `await` and `return` are allowed because the engine runs the program as an async
 * function body.
 */
export function prepareProgramSource(source: string): PreparedSource {
  let program: { body: Located[] };
  try {
    program = parse(source, {
      ecmaVersion: 'latest',
      sourceType: 'script',
      allowAwaitOutsideFunction: true,
      allowReturnOutsideFunction: true,
      locations: true,
    }) as unknown as { body: Located[] };
  } catch (error) {
    const { message, loc } = error as SyntaxError & { loc?: { line: number; column: number } };
    const where = loc ? ` (line ${loc.line}, column ${loc.column + 1})` : '';
    // acorn appends "(line:column)" itself; say it once, in words.
    return { ok: false, error: `SyntaxError: ${message.replace(/\s*\(\d+:\d+\)$/, '')}${where}` };
  }
  const last = program.body.at(-1);
  if (last?.type !== 'ExpressionStatement') return { ok: true, source };
  // The statement's own range includes parentheses around the expression; drop only its `;`.
  const statement = source.slice(last.start, last.end).replace(/;$/, '');
  const rewritten = `${source.slice(0, last.start)}return (${statement});${source.slice(last.end)}`;
  return { ok: true, source: rewritten };
}
