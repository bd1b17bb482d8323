/**
 * The guest API in one place: every global a program sees and every method of its `tools`
 * object. The catalog's declarations, the reserved identifiers and the instructions' lines about
 * the globals are all made from these tables, and a test compares them with what the prelude
 * (`host/guest-prelude.mjs`) really installs. Adding a global means an entry here and its code in
 * the prelude; see docs/architecture.md ("The guest API").
 */

/** One global of the guest API. */
export interface GuestGlobal {
  /** The global's name, as a program writes it. */
  readonly name: string;
  /**
   * The TypeScript the model reads for it, with a doc comment. `toolMembers` are the catalog's
   * members for each tool, which only `tools` lists.
   */
  readonly declare: (toolMembers: readonly string[]) => string;
  /** What the instructions say about it: one line of their list of what a program can use. */
  readonly instruction: string;
  /** Whether a tool cannot take the global's name as its identifier, so the two are never confused. */
  readonly isReserved: boolean;
  /** The same global in Python programs (see {@link PythonGuestGlobal}). */
  readonly python: PythonGuestGlobal;
}

/**
 * One global of the guest API as a Python program sees it; the Python engine's prelude installs
 * each (see `pythonDeclarations`).
 */
export interface PythonGuestGlobal {
  /** Its name in Python, such as `print` for JavaScript's `console`. */
  readonly name: string;
  /**
   * The Python stub the model reads, with a docstring; omitted for `tools`, which the catalog
   * renders, and for a Python built-in such as `print`.
   */
  readonly declaration?: string;
  /** The line of the Python instructions' list about it. */
  readonly instruction: string;
}

/** One method of the `tools` object beside the tools themselves. */
export interface GuestToolsMethod {
  /** The method's name: `tools.<name>`. No tool can take it as its identifier. */
  readonly name: string;
  /** Its member inside `declare const tools: { ... }`, indented by two spaces, with a doc comment. */
  readonly declaration: string;
}

/** The methods every `tools` object has, in the order they are declared after the tools. */
export const guestToolsMethods: readonly GuestToolsMethod[] = Object.freeze([
  {
    name: 'call',
    declaration: [
      '  /** Calls a tool by its name, its identifier or `tools.<identifier>`. */',
      '  call(name: string, args?: object): Promise<unknown>;',
    ].join('\n'),
  },
  {
    name: 'parallel',
    declaration: [
      '  /** Runs the calls at the same time; the results keep their order. */',
      '  parallel<T>(...calls: Array<() => Promise<T>>): Promise<T[]>;',
    ].join('\n'),
  },
]);

function declareTools(toolMembers: readonly string[]): string {
  return [
    '/** The tools this program can call; each returns a Promise of its JSON result. */',
    'declare const tools: {',
    ...toolMembers,
    ...guestToolsMethods.map((method) => method.declaration),
    '};',
  ].join('\n');
}

// The shapes follow the prelude: in `ALL_TOOLS`, `name` is the identifier.
const allToolsDeclaration = `/** Every tool with its schemas: \`name\` is what follows \`tools.\`, \`toolName\` is the tool's own name. */
declare const ALL_TOOLS: ReadonlyArray<{
  readonly name: string;
  readonly toolName: string;
  readonly description: string;
  readonly inputSchema: object;
  readonly outputSchema?: object;
}>;`;

const consoleDeclaration = `/** Writes to the same output as \`text\`, one line per call. */
declare const console: {
  log(...values: unknown[]): void;
  info(...values: unknown[]): void;
  warn(...values: unknown[]): void;
  error(...values: unknown[]): void;
  debug(...values: unknown[]): void;
  trace(...values: unknown[]): void;
};`;

/**
 * Every global the prelude installs, in the order the model reads their declarations. Each is
 * read-only and not enumerable in the guest.
 */
export const guestGlobals: readonly GuestGlobal[] = Object.freeze([
  {
    name: 'tools',
    declare: declareTools,
    instruction:
      "Call tools as `await tools.name(args)`; each returns a Promise of its JSON result, so use `Promise.all` (or `tools.parallel(() => ..., () => ...)`) for independent calls. `tools.call('name', args)` takes the name as a string. A failing tool call rejects: catch it with try/catch, or let it fail the program.",
    isReserved: true,
    python: {
      name: 'tools',
      instruction:
        "Call tools as `await tools.name(key=value)`; each returns its JSON result (dict, list, str, int, float, bool or None), so use `asyncio.gather(...)` (or `tools.parallel(lambda: ..., lambda: ...)`) for independent calls. `await tools.call('name', {...})` takes the name as a string, and `tools.name({...})` a dict. A failing tool call raises `ToolError`: catch it with try/except, or let it fail the program.",
    },
  },
  {
    name: 'ALL_TOOLS',
    declare: () => allToolsDeclaration,
    instruction:
      "`ALL_TOOLS` lists every tool with its schema: `name` is what follows `tools.`, `toolName` the tool's own name.",
    isReserved: true,
    python: {
      name: 'ALL_TOOLS',
      declaration: `class ToolInfo(TypedDict):
    """One entry of ALL_TOOLS: name is what follows tools., toolName the tool's own name."""
    name: str
    toolName: str
    description: str
    inputSchema: dict[str, Any]
    outputSchema: NotRequired[dict[str, Any]]

ALL_TOOLS: list[ToolInfo]
"""Every tool with its schemas."""`,
      instruction:
        "`ALL_TOOLS` lists every tool with its schema: `name` is what follows `tools.`, `toolName` the tool's own name.",
    },
  },
  {
    name: 'text',
    declare: () =>
      '/** Adds a line to the output you read back: strings as they are, anything else as JSON. */\ndeclare function text(value: unknown): void;',
    instruction:
      '`text(value)` adds a line to the output you read: strings as they are, anything else as JSON.',
    isReserved: true,
    python: {
      name: 'text',
      declaration: `def text(value: Any) -> None:
    """Adds a line to the output you read back: strings as they are, anything else as JSON."""`,
      instruction:
        '`text(value)` adds a line to the output you read: strings as they are, anything else as JSON.',
    },
  },
  {
    name: 'exit',
    declare: () =>
      '/** Ends the program at once; `value` becomes its result. */\ndeclare function exit(value?: unknown): never;',
    instruction:
      "`exit(value)` ends the program at once and returns `value`. Without it, the program's completion value, as a REPL shows it (the last expression statement that ran, also inside if/else, try/catch or a loop), is returned as `value`.",
    isReserved: true,
    python: {
      name: 'exit',
      declaration: `def exit(value: Any = None) -> NoReturn:
    """Ends the program at once; value becomes its result."""`,
      instruction:
        "`exit(value)` ends the program at once and returns `value` (`except Exception` does not catch it). Without it, the value of the program's last line, when that line is an expression, is returned as `value`.",
    },
  },
  {
    name: 'finish',
    declare: () => '/** The same as `exit`. */\ndeclare function finish(value?: unknown): never;',
    instruction: '`finish(value)` is the same as `exit(value)`.',
    isReserved: true,
    python: {
      name: 'finish',
      declaration: `def finish(value: Any = None) -> NoReturn:
    """The same as exit."""`,
      instruction: '`finish(value)` is the same as `exit(value)`.',
    },
  },
  {
    name: 'console',
    declare: () => consoleDeclaration,
    instruction:
      '`console.log(...)` (and `info`, `warn`, `error`, `debug`, `trace`) adds its values to the same output, one line per call.',
    isReserved: true,
    python: {
      name: 'print',
      instruction: '`print(...)` adds its values to the same output, as Python prints them.',
    },
  },
]);

/**
 * The TypeScript declarations a program runs against: `tools`, whose members are `toolMembers`
 * followed by {@link guestToolsMethods}, then the other {@link guestGlobals}.
 */
export function guestDeclarations(toolMembers: readonly string[]): string {
  return guestGlobals.map((global) => global.declare(toolMembers)).join('\n');
}

/** The instructions' list of what a program can use, one `- ` line per global. */
export function guestInstructionLines(): string {
  return guestGlobals.map((global) => `- ${global.instruction}`).join('\n');
}
