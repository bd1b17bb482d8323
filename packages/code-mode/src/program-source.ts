import { createRequire } from 'node:module';
import type * as Acorn from 'acorn';
import type { ExpressionStatement, Statement, TryStatement } from 'acorn';

// acorn is needed only once a program runs, so it loads then, not when code mode is imported:
// see docs/decisions/2026-12-04-import-and-session-open-time.md.
let parser: typeof Acorn | undefined;
let parserLoading: Promise<void> | undefined;

/**
 * Loads the parser ahead of the first program (a session starts it while its first host starts),
 * so `prepareProgramSource` then never loads anything. The import starts on the next turn of the
 * event loop: since Node 22 an `import()` compiles the module before it returns, which would
 * otherwise lengthen the open of the session that asks. Never rejects: should the load fail,
 * `prepareProgramSource` loads it itself and reports the failure there.
 */
export function loadProgramParser(): Promise<void> {
  parserLoading ??= new Promise<void>((resolve) => setImmediate(resolve))
    .then(() => import('acorn'))
    .then(
      (loaded) => {
        parser ??= loaded;
      },
      () => undefined,
    );
  return parserLoading;
}

/** The parser, loaded synchronously when nothing loaded it ahead. */
function programParser(): typeof Acorn {
  parser ??= createRequire(import.meta.url)('acorn') as typeof Acorn;
  return parser;
}

/** The source ready for the engine, or the syntax error the model must fix. */
export type PreparedSource =
  | { readonly ok: true; readonly source: string }
  | { readonly ok: false; readonly error: string };

/**
 * Parses a program and rewrites it so that it returns its completion value: the value `eval`
 * would give it, which a REPL shows (`if (x) { a } else { b }` gives `a` or `b`; a program
 * ending in a declaration gives the value before it). Top-level `await` and `return` are
 * allowed because the engine runs the program as an async function body (see `wrapProgram`);
 * a top-level `return`, `exit()` and `finish()` still decide the value themselves.
 *
 * The rewrite follows the specification's completion rules statement by statement (see
 * {@link CompletionRewrite}), splicing text in at AST offsets, never guessing at strings. The
 * result starts with a line of its own, so that text the rewrite puts before the program's
 * first statement sits on that line: every line and, where the program puts one statement per
 * line, every column of the program stays where it was, and error positions match what the
 * model wrote (the guest subtracts that first line). Nested functions are never rewritten.
 */
export function prepareProgramSource(source: string): PreparedSource {
  const comments = new Map<number, number>();
  let body: Statement[];
  const { parse } = programParser();
  try {
    const program = parse(source, {
      ecmaVersion: 'latest',
      sourceType: 'script',
      allowAwaitOutsideFunction: true,
      allowReturnOutsideFunction: true,
      // A `#!` line would be a syntax error inside the function body the program runs in.
      allowHashBang: false,
      locations: true,
      onComment: (_isBlock, _text, start, end) => {
        comments.set(end, start);
      },
    });
    body = program.body as Statement[];
  } catch (error) {
    const { message, loc } = error as SyntaxError & { loc?: { line: number; column: number } };
    const where = loc ? ` (line ${loc.line}, column ${loc.column + 1})` : '';
    // acorn appends "(line:column)" itself; say it once, in words.
    return { ok: false, error: `SyntaxError: ${message.replace(/\s*\(\d+:\d+\)$/, '')}${where}` };
  }
  return { ok: true, source: new CompletionRewrite(source, comments).program(body) };
}

/** Text to splice in at `at` (an offset in the program); `order` breaks ties in the order given. */
interface Insertion {
  readonly at: number;
  readonly order: number;
  readonly text: string;
}

/** Where a statement sits: in a statement list, or as the single body of another statement. */
type Place = 'list' | 'body';

/** Statements whose completion is never empty: they give `undefined` when nothing inside gives a value. */
const valueStatements = new Set([
  'IfStatement',
  'WhileStatement',
  'DoWhileStatement',
  'ForStatement',
  'ForInStatement',
  'ForOfStatement',
  'SwitchStatement',
  'TryStatement',
  'WithStatement',
]);

/** Statements that never give a value and run no statement inside (declarations, `;`, `debugger`). */
const inertStatements = new Set([
  'VariableDeclaration',
  'FunctionDeclaration',
  'ClassDeclaration',
  'EmptyStatement',
  'DebuggerStatement',
]);

/**
 * Makes a program return its completion value. The specification's rule (ECMA-262, "Runtime
 * Semantics: Evaluation" with UpdateEmpty) comes down to: the completion value is the last value
 * given in execution order, where each expression statement gives its value, and `if`, loops,
 * `switch`, `try`, `catch` and `with` give `undefined` as they start (so a loop that never runs,
 * or an `if` whose branch gives nothing, completes with `undefined`), with one exception: a
 * `finally` block that completes normally gives nothing, keeping the value from before it.
 * `break` and `continue` carry the value so far, which this rule gives by itself.
 *
 * So the rewrite assigns each such value to one variable in execution order: `$value=` before
 * each expression statement, `$value=void 0;` before each of those statements (only where a
 * value may have been given since the last one), a save and reset at the start of a `finally`
 * that restores at its normal end, and `return $value` after the program. Inserted text goes
 * right after the previous token when a line break separates it from the statement, so the
 * statement keeps its column.
 */
class CompletionRewrite {
  readonly #source: string;
  /** Comment end offset → start offset, to step back over comments. */
  readonly #comments: Map<number, number>;
  /** The completion variable, a name the program's text never contains. */
  readonly #name: string;
  readonly #insertions: Insertion[] = [];
  /** Text that goes on the first line, before the program: for a first statement with no token before it. */
  #prologue = '';
  #order = 0;
  /** Values given and resets placed so far, to tell whether a region gave any. */
  #events = 0;
  /** `break` and `continue` statements seen so far. */
  #jumps = 0;
  /** Variables that hold the completion value during a `finally` block. */
  readonly #saved: string[] = [];

  constructor(source: string, comments: Map<number, number>) {
    this.#source = source;
    this.#comments = comments;
    let name = '$value';
    while (source.includes(name)) name = `$${name}`;
    this.#name = name;
  }

  /** The rewritten program: its own first line, the program with its lines unchanged, the return. */
  program(body: readonly Statement[]): string {
    let first = 0;
    while (isDirective(body[first])) first += 1;
    const lastDirective = body[first - 1] as ExpressionStatement | undefined;
    if (lastDirective !== undefined) {
      // A directive (`'use strict'`) stops being one behind an assignment: its value is given after it.
      const { start, end } = lastDirective.expression;
      this.#insert(lastDirective.end, `;${this.#name}=${this.#source.slice(start, end)};`);
    }
    this.#list(body.slice(first), lastDirective === undefined);
    const declared = [this.#name, ...this.#saved].join(',');
    const parts: string[] = [this.#prologue, '\n'];
    let copied = 0;
    const insertions = this.#insertions.sort((left, right) => left.at - right.at || left.order - right.order);
    for (const { at, text } of insertions) {
      parts.push(this.#source.slice(copied, at), text);
      copied = at;
    }
    parts.push(this.#source.slice(copied), `\n;return ${this.#name};var ${declared};`);
    return parts.join('');
  }

  /** `isFresh`: the variable holds `undefined` and nothing has given a value since. */
  #list(statements: readonly Statement[], isFresh: boolean): void {
    let fresh = isFresh;
    for (const statement of statements) {
      this.#statement(statement, 'list', fresh);
      fresh = fresh && inertStatements.has(statement.type);
    }
  }

  #statement(statement: Statement, place: Place, isFresh: boolean): void {
    if (!isFresh && givesUndefinedFirst(statement)) this.#reset(statement, place);
    switch (statement.type) {
      case 'ExpressionStatement':
        this.#capture(statement, place);
        return;
      case 'BlockStatement':
        this.#list(statement.body, isFresh);
        return;
      case 'IfStatement':
        this.#statement(statement.consequent, 'body', true);
        if (statement.alternate) this.#statement(statement.alternate, 'body', true);
        return;
      case 'WithStatement':
        this.#statement(statement.body, 'body', true);
        return;
      case 'WhileStatement':
      case 'DoWhileStatement':
      case 'ForStatement':
      case 'ForInStatement':
      case 'ForOfStatement':
        // From the second iteration on, the body's statements follow the previous iteration's values.
        this.#statement(statement.body, 'body', false);
        return;
      case 'LabeledStatement':
        // A reset needed by the labelled statement went before the label: `continue label` must
        // still find its loop right after the label.
        this.#statement(statement.body, 'body', isFresh || givesUndefinedFirst(statement.body));
        return;
      case 'SwitchStatement':
        for (const clause of statement.cases) this.#list(clause.consequent, false);
        return;
      case 'TryStatement':
        this.#try(statement);
        return;
      case 'BreakStatement':
      case 'ContinueStatement':
        this.#jumps += 1;
        return;
      default:
        // Declarations, `return`, `throw`, `;` and `debugger` give no value.
        return;
    }
  }

  #try(statement: TryStatement): void {
    const { block, handler, finalizer } = statement;
    const eventsBefore = this.#events;
    this.#list(block.body, true);
    if (handler) {
      // A catch block gives `undefined` if it gives nothing, even after the try block gave a value.
      if (this.#events > eventsBefore) this.#insertAt(handler.body.start + 1, `${this.#name}=void 0;`);
      this.#list(handler.body.body, true);
    }
    if (finalizer) {
      const order = this.#nextOrder();
      const eventsBeforeFinally = this.#events;
      const jumpsBeforeFinally = this.#jumps;
      this.#list(finalizer.body, true);
      if (this.#events === eventsBeforeFinally && this.#jumps === jumpsBeforeFinally) return;
      // A finally block that completes normally keeps the value from before it; one that breaks
      // out gives its own (`undefined` if it gives nothing).
      const saved = `${this.#name}_${this.#saved.length + 1}`;
      this.#saved.push(saved);
      this.#insertions.push({
        at: finalizer.start + 1,
        order,
        text: `${saved}=${this.#name};${this.#name}=void 0;`,
      });
      this.#insert(finalizer.end - 1, `;${this.#name}=${saved};`);
    }
  }

  /** Makes the statement assign its value to the completion variable. */
  #capture(statement: ExpressionStatement, place: Place): void {
    const { expression } = statement;
    const isParenthesized = expression.start > statement.start;
    let opening = `${this.#name}=`;
    let closing = '';
    if (expression.type === 'SequenceExpression' && !isParenthesized) {
      opening += '(';
      closing = ')';
    } else if (isAnonymousDefinition(expression)) {
      // `$value = () => {}` would name the function `$value`; the comma keeps it anonymous.
      opening += '(0,';
      closing = ')';
    }
    this.#insertBefore(statement, opening, place);
    if (closing !== '') this.#insert(this.#expressionEnd(statement), closing);
    this.#events += 1;
  }

  /** Sets the completion variable to `undefined` before the statement starts. */
  #reset(statement: Statement, place: Place): void {
    const reset = `${this.#name}=void 0;`;
    if (place === 'list') {
      this.#insertBefore(statement, reset, place);
    } else {
      // A single statement body becomes a block, so that the reset runs each time the body does.
      this.#insertBefore(statement, `{${reset}`, place);
      this.#insert(statement.end, '}');
    }
    this.#events += 1;
  }

  /**
   * Inserts `text` so that it runs just before `statement`: right after the previous token when
   * a line break comes between them (the statement keeps its column), else at the statement.
   */
  #insertBefore(statement: Statement, text: string, place: Place): void {
    const previousEnd = this.#previousTokenEnd(statement.start);
    if (previousEnd === 0) {
      this.#prologue += text;
      return;
    }
    if (!/[\n\r\u2028\u2029]/.test(this.#source.slice(previousEnd, statement.start))) {
      // Right after a keyword (`do(a, b)`, `else[0]`) the inserted name would join the keyword.
      const isJoined = /[\w$\\\u0080-\uffff]/.test(this.#source.charAt(statement.start - 1));
      this.#insert(statement.start, `${isJoined ? ' ' : ''}${text}`);
      return;
    }
    // In a list the previous statement may rely on a line break to end it; `;` ends it instead.
    this.#insert(previousEnd, `${place === 'list' ? ';' : ' '}${text}`);
  }

  /** The offset just after the last token before `offset`, 0 when there is none. */
  #previousTokenEnd(offset: number): number {
    let at = offset;
    for (;;) {
      while (at > 0 && /\s/.test(this.#source.charAt(at - 1))) at -= 1;
      const commentStart = this.#comments.get(at);
      if (commentStart === undefined) return at;
      at = commentStart;
    }
  }

  /** Where the statement's expression ends, before the statement's own `;`. */
  #expressionEnd(statement: ExpressionStatement): number {
    return this.#source.charAt(statement.end - 1) === ';'
      ? this.#previousTokenEnd(statement.end - 1)
      : statement.end;
  }

  #insert(at: number, text: string): void {
    this.#insertions.push({ at, order: this.#nextOrder(), text });
  }

  #insertAt(at: number, text: string): void {
    this.#insert(at, text);
    this.#events += 1;
  }

  #nextOrder(): number {
    this.#order += 1;
    return this.#order;
  }
}

function isDirective(statement: Statement | undefined): statement is ExpressionStatement {
  return statement?.type === 'ExpressionStatement' && typeof statement.directive === 'string';
}

/** Whether the statement (through any labels) starts by giving `undefined`. */
function givesUndefinedFirst(statement: Statement): boolean {
  if (statement.type === 'LabeledStatement') return givesUndefinedFirst(statement.body);
  return valueStatements.has(statement.type);
}

/** A function or class without a name of its own, which an assignment would name. */
function isAnonymousDefinition(expression: ExpressionStatement['expression']): boolean {
  switch (expression.type) {
    case 'ArrowFunctionExpression':
      return true;
    case 'FunctionExpression':
    case 'ClassExpression':
      return !expression.id;
    default:
      return false;
  }
}
