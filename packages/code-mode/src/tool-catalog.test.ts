import { defineTool, type Tool } from '@ghost/core';
import { type TObject, Type } from 'typebox';
import { describe, expect, it } from 'vitest';
import { CodeModeConfigurationError } from './errors.js';
import { typeProblems } from './test-support/typescript-problems.js';
import { reservedIdentifiers, ToolCatalog, toIdentifier } from './tool-catalog.js';

const where = "Agent 'support' code mode";

function tool(name: string, options: { description?: string; input?: TObject; output?: unknown } = {}): Tool {
  return defineTool({
    name,
    description: options.description ?? `Does ${name}.`,
    input: options.input ?? Type.Object({}),
    ...(options.output === undefined ? {} : { output: options.output as TObject }),
    execute: () => null,
  }) as unknown as Tool;
}

const lookup = tool('help-center-lookup', {
  description: 'Finds the help-center entry for a topic.',
  input: Type.Object({
    topic: Type.String({ description: 'What the customer asked about.' }),
    limit: Type.Optional(Type.Integer({ minimum: 1 })),
  }),
  output: Type.Object({ title: Type.String(), text: Type.String() }),
});

const refund = tool('refund', {
  description: 'Refunds an order.\nOnly for orders younger than 30 days.',
  input: Type.Object({ orderId: Type.String() }),
});

/** The error `build` throws, so its code, message and fields can be checked together. */
function failure(build: () => unknown): CodeModeConfigurationError {
  try {
    build();
  } catch (error) {
    if (error instanceof CodeModeConfigurationError) return error;
    throw error;
  }
  throw new Error('expected a CodeModeConfigurationError');
}

describe('toIdentifier', () => {
  it.each([
    ['lookup', 'lookup'],
    ['help-center-lookup', 'help_center_lookup'],
    ['snake_case_2', 'snake_case_2'],
    ['3d-render', '_3d_render'],
    ['0', '_0'],
    ['-', '_'],
    ['then', '_then'],
    ['thenable', 'thenable'],
    ['a.b c', 'a_b_c'],
    ['$price', '$price'],
  ])('turns %j into %j', (name, identifier) => {
    expect(toIdentifier(name)).toBe(identifier);
  });
});

describe('reservedIdentifiers', () => {
  it('holds the tools methods, the guest globals, then and the Object.prototype names', () => {
    expect([...reservedIdentifiers]).toEqual([
      'call',
      'parallel',
      'exec',
      'wait',
      'stop',
      'tools',
      'ALL_TOOLS',
      'text',
      'exit',
      'finish',
      'console',
      'then',
      'constructor',
      'prototype',
      '__proto__',
      'toString',
      'valueOf',
      'hasOwnProperty',
      'toJSON',
    ]);
  });
});

describe('ToolCatalog.fromTools', () => {
  it('describes each tool, in order, with its identifier and schemas', () => {
    const catalog = ToolCatalog.fromTools([lookup, refund], where);
    expect(catalog.tools.map((entry) => [entry.name, entry.identifier])).toEqual([
      ['help-center-lookup', 'help_center_lookup'],
      ['refund', 'refund'],
    ]);
    const [first, second] = catalog.tools;
    expect(first?.description).toBe('Finds the help-center entry for a topic.');
    expect(first?.inputSchema).toEqual(lookup.inputJsonSchema);
    expect(first?.outputSchema).toEqual(lookup.outputJsonSchema);
    expect(second?.outputSchema).toBeUndefined();
  });

  it('declares a tool as a method with its description, input and output types', () => {
    const catalog = ToolCatalog.fromTools([lookup], where);
    expect(catalog.tools[0]?.declaration).toBe(
      [
        '  /** Finds the help-center entry for a topic. */',
        '  help_center_lookup(args: {',
        '    /** What the customer asked about. */',
        '    topic: string;',
        '    /** integer, minimum: 1 */',
        '    limit?: number;',
        '  }): Promise<{',
        '    title: string;',
        '    text: string;',
        '  }>;',
      ].join('\n'),
    );
  });

  it('returns Promise<unknown> without an output schema and keeps multi-line descriptions', () => {
    const catalog = ToolCatalog.fromTools([refund], where);
    expect(catalog.tools[0]?.declaration).toBe(
      [
        '  /**',
        '   * Refunds an order.',
        '   * Only for orders younger than 30 days.',
        '   */',
        '  refund(args: {',
        '    orderId: string;',
        '  }): Promise<unknown>;',
      ].join('\n'),
    );
  });

  it('makes args optional when nothing in it is required, and renders non-object outputs', () => {
    const status = tool('status', {
      description: '',
      input: Type.Object({ verbose: Type.Optional(Type.Boolean()) }),
      output: Type.Union([Type.Literal('up'), Type.Literal('down')]),
    });
    const ping = tool('ping', { output: Type.Array(Type.Number()) });
    const catalog = ToolCatalog.fromTools([status, ping], where);
    expect(catalog.tools[0]?.declaration).toBe(
      '  status(args?: {\n    verbose?: boolean;\n  }): Promise<"up" | "down">;',
    );
    expect(catalog.tools[1]?.declaration).toBe(
      '  /** Does ping. */\n  ping(args?: Record<string, unknown>): Promise<number[]>;',
    );
  });

  it('rejects a tool whose identifier is reserved, naming it and the way out', () => {
    for (const name of ['call', 'parallel', 'exec', 'ALL_TOOLS', 'toString', '__proto__', 'toJSON']) {
      const error = failure(() => ToolCatalog.fromTools([refund, tool(name)], where));
      expect(error.code).toBe('CODE_MODE_TOOL_NAME_RESERVED');
      expect(error.message).toBe(
        `${where}: tool '${name}' would be tools.${name}, a name code mode reserves. Rename the tool, or keep it model-facing by listing it in \`except\`.`,
      );
      expect([error.tool, error.identifier]).toEqual([name, name]);
    }
  });

  it('with onNameConflict, renames a reserved identifier and leaves out a taken one, saying so', () => {
    const warnings: string[] = [];
    const catalog = ToolCatalog.fromTools(
      [refund, tool('exit'), tool('_call'), tool('call'), tool('toString'), tool('look_up'), tool('look-up')],
      where,
      { onNameConflict: (warning) => warnings.push(warning) },
    );
    expect(catalog.tools.map((entry) => [entry.name, entry.identifier])).toEqual([
      ['refund', 'refund'],
      ['exit', '_exit'],
      ['_call', '_call'],
      ['toString', '_toString'],
      ['look_up', 'look_up'],
    ]);
    expect(catalog.find('exit')?.identifier).toBe('_exit');
    expect(catalog.find('tools._exit')?.name).toBe('exit');
    expect(catalog.declarations).toContain('  _exit(args?: Record<string, unknown>): Promise<unknown>;');
    expect(warnings).toEqual([
      `${where}: tool 'exit' is tools._exit in programs: tools.exit is a name code mode reserves.`,
      `${where}: tool 'call' was left out of the program catalog: it would be tools._call, the name of tool '_call'.`,
      `${where}: tool 'toString' is tools._toString in programs: tools.toString is a name code mode reserves.`,
      `${where}: tool 'look-up' was left out of the program catalog: it would be tools.look_up, the name of tool 'look_up'.`,
    ]);
  });

  it('accepts then, which becomes _then, and names that only contain a reserved word', () => {
    const catalog = ToolCatalog.fromTools([tool('then'), tool('call-center'), tool('exit_survey')], where);
    expect(catalog.tools.map((entry) => entry.identifier)).toEqual(['_then', 'call_center', 'exit_survey']);
  });

  it.each([
    ['help-center', 'help_center'],
    ['3d', '_3d'],
    ['then', '_then'],
  ])('rejects %j and %j, which would both be one identifier', (first, second) => {
    const error = failure(() => ToolCatalog.fromTools([tool(first), tool(second)], where));
    expect(error.code).toBe('CODE_MODE_TOOL_NAME_COLLISION');
    const identifier = toIdentifier(second);
    expect(error.message).toBe(
      `${where}: tools '${first}' and '${second}' would both be tools.${identifier}. Rename one of them, or keep one model-facing by listing it in \`except\`.`,
    );
    expect([error.tools, error.identifier]).toEqual([[first, second], identifier]);
  });

  it('rejects the same tool given twice', () => {
    const error = failure(() => ToolCatalog.fromTools([refund, refund], where));
    expect(error.code).toBe('CODE_MODE_TOOL_NAME_COLLISION');
    expect(error.message).toBe(`${where}: tool 'refund' is given twice. Remove one of them.`);
  });

  it('builds an empty catalog', () => {
    const catalog = ToolCatalog.fromTools([], where);
    expect(catalog.tools).toEqual([]);
    expect(catalog.toJSON()).toEqual([]);
    expect(typeProblems(catalog.declarations)).toEqual([]);
  });
});

describe('ToolCatalog.find', () => {
  const catalog = ToolCatalog.fromTools([lookup, refund, tool('then')], where);

  it('finds a tool by its name, its identifier and tools.<identifier>', () => {
    for (const key of ['help-center-lookup', 'help_center_lookup', 'tools.help_center_lookup']) {
      expect(catalog.find(key)?.name).toBe('help-center-lookup');
    }
    for (const key of ['then', '_then', 'tools._then']) expect(catalog.find(key)?.name).toBe('then');
    expect(catalog.find('tools.refund')).toBe(catalog.tools[1]);
  });

  it('finds nothing for other names, including inherited ones', () => {
    for (const key of [
      'missing',
      'tools.help-center-lookup',
      'tools.',
      'tools',
      'constructor',
      '__proto__',
      '',
    ]) {
      expect(catalog.find(key)).toBeUndefined();
    }
  });
});

describe('ToolCatalog.toJSON', () => {
  it('gives name, identifier, description and schemas, leaving out a missing output schema', () => {
    const catalog = ToolCatalog.fromTools([lookup, refund], where);
    expect(catalog.toJSON()).toEqual([
      {
        name: 'help-center-lookup',
        identifier: 'help_center_lookup',
        description: 'Finds the help-center entry for a topic.',
        inputSchema: lookup.inputJsonSchema,
        outputSchema: lookup.outputJsonSchema,
      },
      {
        name: 'refund',
        identifier: 'refund',
        description: 'Refunds an order.\nOnly for orders younger than 30 days.',
        inputSchema: refund.inputJsonSchema,
      },
    ]);
    expect(Object.hasOwn(catalog.toJSON()[1]!, 'outputSchema')).toBe(false);
    expect(JSON.parse(JSON.stringify(catalog))).toEqual(catalog.toJSON());
  });
});

describe('ToolCatalog: frozen', () => {
  it('freezes the catalog, its lists, its entries and their schemas', () => {
    const catalog = ToolCatalog.fromTools([lookup, refund], where);
    expect(Object.isFrozen(catalog)).toBe(true);
    expect(Object.isFrozen(catalog.tools)).toBe(true);
    expect(Object.isFrozen(catalog.toJSON())).toBe(true);
    for (const entry of catalog.tools) expect(Object.isFrozen(entry)).toBe(true);
    for (const entry of catalog.toJSON()) expect(Object.isFrozen(entry)).toBe(true);
    const schema = catalog.tools[0]!.inputSchema as { properties: { topic: object } };
    expect(Object.isFrozen(schema)).toBe(true);
    expect(Object.isFrozen(schema.properties.topic)).toBe(true);
    expect(Object.isFrozen(catalog.tools[0]!.outputSchema)).toBe(true);
  });

  it('freezes copies, leaving the tools it was given as they were', () => {
    ToolCatalog.fromTools([refund], where);
    expect(Object.isFrozen(refund.inputJsonSchema)).toBe(false);
  });
});

describe('ToolCatalog.declarations', () => {
  it('declares tools with every tool, call and parallel, then the guest globals', () => {
    const catalog = ToolCatalog.fromTools([refund], where);
    expect(catalog.declarations).toBe(
      [
        '/** The tools this program can call; each returns a Promise of its JSON result. */',
        'declare const tools: {',
        '  /**',
        '   * Refunds an order.',
        '   * Only for orders younger than 30 days.',
        '   */',
        '  refund(args: {',
        '    orderId: string;',
        '  }): Promise<unknown>;',
        '  /** Calls a tool by its name, its identifier or `tools.<identifier>`. */',
        '  call(name: string, args?: object): Promise<unknown>;',
        '  /** Runs the calls at the same time; the results keep their order. */',
        '  parallel<T>(...calls: Array<() => Promise<T>>): Promise<T[]>;',
        '};',
        "/** Every tool with its schemas: `name` is what follows `tools.`, `toolName` is the tool's own name. */",
        'declare const ALL_TOOLS: ReadonlyArray<{',
        '  readonly name: string;',
        '  readonly toolName: string;',
        '  readonly description: string;',
        '  readonly inputSchema: object;',
        '  readonly outputSchema?: object;',
        '}>;',
        '/** Adds a line to the output you read back: strings as they are, anything else as JSON. */',
        'declare function text(value: unknown): void;',
        '/** Ends the program at once; `value` becomes its result. */',
        'declare function exit(value?: unknown): never;',
        '/** The same as `exit`. */',
        'declare function finish(value?: unknown): never;',
        '/** Writes to the same output as `text`, one line per call. */',
        'declare const console: {',
        '  log(...values: unknown[]): void;',
        '  info(...values: unknown[]): void;',
        '  warn(...values: unknown[]): void;',
        '  error(...values: unknown[]): void;',
        '  debug(...values: unknown[]): void;',
        '  trace(...values: unknown[]): void;',
        '};',
      ].join('\n'),
    );
  });

  it('is TypeScript a program type-checks against, with the tool types enforced', () => {
    const nested = tool('create-ticket', {
      description: 'Opens a ticket. Never put */ in a subject.',
      input: Type.Object({
        subject: Type.String({ description: 'One line, no */ please.', maxLength: 80 }),
        customer: Type.Object({
          id: Type.String(),
          tags: Type.Optional(Type.Array(Type.Union([Type.Literal('vip'), Type.Literal('new')]))),
        }),
        'x-trace': Type.Optional(Type.Union([Type.String(), Type.Null()])),
        extra: Type.Optional(Type.Record(Type.String(), Type.Number())),
        pair: Type.Optional(Type.Tuple([Type.String(), Type.Integer()])),
      }),
      output: Type.Object({ ticketId: Type.String(), priority: Type.Optional(Type.Integer()) }),
    });
    const catalog = ToolCatalog.fromTools([lookup, refund, nested, tool('then'), tool('3d')], where);
    const program = `${catalog.declarations}
async function program(): Promise<void> {
  const entry = await tools.help_center_lookup({ topic: 'refunds', limit: 3 });
  text(entry.title.toUpperCase());
  await tools.refund({ orderId: 'A-1' });
  const ticket = await tools.create_ticket({
    subject: 'Late parcel',
    customer: { id: 'c1', tags: ['vip'] },
    'x-trace': null,
    extra: { weight: 2 },
    pair: ['a', 1],
  });
  const id: string = ticket.ticketId;
  await tools._then();
  await tools._3d({});
  const results = await tools.parallel(() => tools.call('refund', { orderId: 'B' }), () => tools.call('tools.refund'));
  console.log(id, results.length, ALL_TOOLS[0]?.toolName);
  if (results.length === 0) exit({ id });
  finish();
}
`;
    expect(typeProblems(program)).toEqual([]);
    // The same program with a wrong argument must fail, or the check above proves nothing.
    const wrong = program.replace("orderId: 'A-1'", 'orderId: 1');
    expect(typeProblems(wrong)).toEqual(["Type 'number' is not assignable to type 'string'."]);
  });
});
