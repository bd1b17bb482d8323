import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { prepareProgramSource } from './program-source.js';

/** Runs prepared source as the engines do: the body of an async function, here in a fresh Node context. */
async function runPrepared(source: string): Promise<unknown> {
  const prepared = prepareProgramSource(source);
  if (!prepared.ok) throw new Error(prepared.error);
  return await runInNewContext(`(async () => {${prepared.source}\n})()`);
}

/** Programs whose completion value the rewrite must give exactly as `eval` does. */
const programs = [
  // expression statements, sequences, parentheses, anonymous functions
  '6 * 7',
  'const a = 1;\na + 1',
  '({ a: 1 }) // done',
  '1, 2, 3',
  '(1, 2), 3',
  'let x; x = 5',
  '(() => 1).name',
  '"before"; (function () {}).name',
  // declarations give nothing
  'let done = true;',
  '"value"; var declared = 1',
  '"value"; let lexical = 1',
  '"value"; const constant = 1',
  '"value"; function declared() { "inner" }',
  '"value"; class Declared { static field = "inner" }',
  '"value"; ;',
  '"value"; debugger;',
  // if
  'if (true) { "yes" } else { "no" }',
  'if (false) { "yes" } else { "no" }',
  '"before"; if (false) { "yes" }',
  '"before"; if (true) {}',
  'if (true) "a"; else "b"',
  'if (false) "a"; else if (true) "b"; else "c"',
  '"before"; if (false) "a"; else if (false) "b"',
  '"before"; if (true) ; else "b"',
  // blocks
  '"before"; { "block" }',
  '"before"; {}',
  '"before"; { let inner = 1 }',
  '{ "a"; { "b"; { } } }',
  // loops
  'let total = 0; for (let i = 0; i < 4; i++) total += i',
  '"before"; for (const item of []) item',
  '"before"; while (false) "never"',
  'for (const item of ["a", "b"]) item.toUpperCase()',
  'for (const key in { a: 1, b: 2 }) key',
  'let n = 0; while (n < 3) n++',
  'let m = 0; do m++; while (m < 3)',
  'do { "once" } while (false)',
  '"before"; do ; while (false)',
  'for (;;) { "loop"; break }',
  'for (const n of [1, 2, 3]) { n; if (n === 2) break }',
  'for (const n of [1, 2, 3]) { if (n === 2) break; n }',
  'for (const n of [1, 2, 3]) if (n < 3) n * 10',
  'for (const n of [1, 2, 3]) if (n < 3) n * 10; else {}',
  'let k = 0; while (k < 3) if (k++ === 0) "first"',
  'next: for (const n of [1, 2, 3]) { if (n === 2) continue next; n * 10 }',
  'outer: for (const a of [1, 2]) { for (const b of [1, 2]) { if (b === 2) continue outer; a * 10 + b } }',
  'outer: for (const a of [1, 2]) inner: for (const b of [1, 2]) { if (a === 2) break outer; a * 10 + b }',
  '"before"; for (const n of [1]) { break }',
  '"before"; for (const n of [1]) { continue }',
  'for (const n of [1, 2]) { n; continue }',
  // switch
  'switch (2) { case 1: "one"; break; case 2: "two"; break; default: "other" }',
  'switch (3) { case 1: "one"; break; default: "other"; case 2: "two" }',
  'switch (3) { case 3: "three"; case 4: break; }',
  '"before"; switch (1) {}',
  '"before"; switch (0) { case 0: }',
  '"before"; switch (0) { case 0: break }',
  'switch (0) { case 0: "zero"; if (true) break; "never" }',
  // labeled statements
  'block: { "kept"; break block; "never" }',
  '"before"; block: { break block; }',
  '"before"; block: ;',
  'l: { "a"; { "b"; break l; } }',
  '"before"; l: for (;;) { break l }',
  '"before"; l: if (true) { break l }',
  // try
  'try { JSON.parse("{") } catch (error) { error.name }',
  'try { "tried" } catch {}',
  '"before"; try {} catch {}',
  '"before"; try { "tried"; throw new Error("x") } catch {}',
  'try { "tried" } finally { "cleaned up" }',
  'try { throw 1 } catch { "caught" } finally { "cleaned up" }',
  'l: try { "tried" } finally { "finally wins"; break l }',
  '"before"; l: try { "tried" } finally { break l }',
  'for (;;) { try { "tried"; break } finally { "cleaned up" } }',
  '"before"; for (;;) { try { "tried" } finally { break } }',
  'try { try { "inner" } finally { "inner finally" } } finally { "outer finally" }',
  'try { "a" } finally { try { "b" } finally { "c" } }',
  // with
  'with ({ a: 1 }) a',
  '"before"; with ({}) {}',
  // directives
  '"use strict"',
  '"use strict"; (function () { return typeof this })()',
  '"use strict";\n"another";\n1 + 1',
  // nested functions are never rewritten
  '"outer"; var result = (() => { "inner" })()',
  '"outer"; var other = (function () { if (true) { "inner" } })()',
  '"outer"; class Holder { static { "static block" } }',
  // a value right after a keyword
  'do(1, 2); while (false)',
  'if (false) 1; else"else"',
  // lines and comments between statements
  '// a comment first\n\n"first";\n/* between */\n"second" // after\n',
  'if (true)\n  "next line"\nelse\n  "other"',
  'for (const n of [1, 2])\n  if (n === 1)\n    "one"',
];

/**
 * Random programs of nested statements (a fixed seed, so every run sees the same ones): any mix
 * of expression statements, declarations, if/else, blocks, loops, break/continue, labels, try,
 * finally and switch, with and without line breaks and comments between them.
 */
function generatedPrograms(count: number): string[] {
  let seed = 20261204;
  const pick = (choices: number) => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return seed % choices;
  };
  let names = 0;
  const gap = () => ['', ' ', '\n', '\n  // note\n', '/* note */'][pick(5)] as string;
  const value = () => {
    names += 1;
    return [`${names}`, `"s${names}"`, `(${names}, ${names + 1})`, `[${names}]`, `total += ${names}`][
      pick(5)
    ];
  };
  const statement = (depth: number, inLoop: boolean, labels: readonly string[]): string => {
    const body = () => statement(depth + 1, inLoop, labels);
    const loopBody = () => statement(depth + 1, true, labels);
    const inner = () => list(depth + 1, inLoop, labels);
    switch (pick(depth > 3 ? 3 : 15)) {
      case 0:
        return `${value()};`;
      case 1:
        return `${value()}${gap()}`;
      case 2:
        return `var declared${names++} = 1;`;
      case 3:
        return `if (${pick(2) ? 'true' : 'false'})${gap()}${body()}${pick(2) ? ` else${gap()}${body()}` : ''}`;
      case 4:
        return `{${gap()}${inner()}${gap()}}`;
      case 5:
        return `for (let i${depth} = 0; i${depth} < ${pick(3)}; i${depth}++)${gap()}${loopBody()}`;
      case 6:
        return `do${gap()}${loopBody()}${gap()}while (false)`;
      case 7:
        return inLoop ? (pick(2) ? 'break;' : 'continue;') : ';';
      case 8:
        return `try {${gap()}${inner()}${pick(2) ? ' throw 0;' : ''}} catch {${inner()}}${pick(2) ? ` finally {${inner()}}` : ''}`;
      case 9:
        return `try {${inner()}} finally {${gap()}${inner()}}`;
      case 10: {
        const label = `block${names++}`;
        return `${label}:${gap()}${statement(depth + 1, inLoop, [...labels, label])}`;
      }
      case 11:
        return labels.length > 0 ? `break ${labels[pick(labels.length)]};` : ';';
      case 12:
        return `switch (${pick(3)}) { case 0: ${inner()} case 1: ${inner()}${pick(2) ? ' break;' : ''} default: ${inner()} }`;
      case 13: {
        const label = `loop${names++}`;
        const skip = pick(2) ? `if (x${depth} === 1) continue ${label};` : '';
        return `${label}: for (const x${depth} of [1, 2])${gap()}{ ${list(depth + 1, true, labels)} ${skip} ${list(depth + 1, true, labels)} }`;
      }
      default:
        return `while (total < ${pick(40)}) { total += 7; ${list(depth + 1, true, labels)} }`;
    }
  };
  const list = (depth: number, inLoop: boolean, labels: readonly string[]): string => {
    const statements: string[] = [];
    for (let left = pick(4); left > 0; left -= 1) statements.push(statement(depth, inLoop, labels));
    return statements.join(pick(2) ? '\n' : ' ');
  };
  return Array.from({ length: count }, () => `var total = 0;\n${list(0, false, [])}`);
}

describe('prepareProgramSource', () => {
  it.each(programs)('completes %j with the value eval gives', async (source) => {
    expect(await runPrepared(source)).toEqual(runInNewContext(source));
  });

  it('completes 500 generated programs of nested statements with the values eval gives', async () => {
    const mismatches: unknown[] = [];
    for (const source of generatedPrograms(500)) {
      const expected: unknown = runInNewContext(source, {}, { timeout: 1000 });
      const actual = await runPrepared(source);
      if (JSON.stringify(actual) !== JSON.stringify(expected)) mismatches.push({ source, actual, expected });
    }
    expect(mismatches).toEqual([]);
  });

  it('lets a top-level return decide the value', async () => {
    expect(await runPrepared('const x = 2;\nif (x) return "returned";\n"last"')).toBe('returned');
    expect(await runPrepared('return;\n"last"')).toBeUndefined();
  });

  it('keeps top-level await, and var and let declarations, at the top level', async () => {
    expect(await runPrepared('const a = await Promise.resolve(2);\nvar b = 3;\nlet c = a * b;\nc')).toBe(6);
    expect(await runPrepared('for (const n of [1, 2]) await n')).toBe(2);
    expect(await runPrepared('var $value = "taken"; let $$value = 1;\n$value')).toBe('taken');
  });

  it('keeps every line of the program where it was, and the column of each statement on its own line', () => {
    const source = 'const a = 1;\nif (a) {\n  "inside";\n  a + 1;\n} else\n  a\nfor (;;) break';
    const prepared = prepareProgramSource(source);
    expect(prepared.ok).toBe(true);
    const lines = (prepared as { source: string }).source.split('\n');
    // The first line is the rewrite's own; the program follows it line for line.
    for (const [index, line] of source.split('\n').entries()) {
      const rewritten = lines[index + 1] as string;
      const code = line.trim();
      expect(rewritten.indexOf(code)).toBe(line.indexOf(code));
    }
  });

  it('puts what goes before the first statement on the first line', () => {
    expect(prepareProgramSource('6 * 7')).toEqual({
      ok: true,
      source: '$value=\n6 * 7\n;return $value;var $value;',
    });
  });

  it('reports a syntax error with its line and column', () => {
    expect(prepareProgramSource('const a = 1;\nconst = 2;')).toEqual({
      ok: false,
      error: 'SyntaxError: Unexpected token (line 2, column 7)',
    });
  });
});
