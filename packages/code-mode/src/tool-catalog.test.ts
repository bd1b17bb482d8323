import { defineTool } from '@ghost/core';
import Type from 'typebox';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { CodeModeConfigurationError } from './errors.js';
import { schemaToTypeScript } from './json-schema-typescript.js';
import { reservedIdentifiers, ToolCatalog, toIdentifier } from './tool-catalog.js';

function tool(name: string, input = Type.Object({}), output?: Parameters<typeof defineTool>[0]['output']) {
  return defineTool({
    name,
    description: `The ${name} tool.`,
    input,
    ...(output ? { output } : {}),
    execute: () => null,
  });
}

function parseErrors(source: string): string[] {
  const file = ts.createSourceFile('declarations.d.ts', source, ts.ScriptTarget.Latest, true);
  return (file as unknown as { parseDiagnostics: { messageText: string }[] }).parseDiagnostics.map((each) =>
    String(each.messageText),
  );
}

describe('schemaToTypeScript', () => {
  it.each([
    [{ type: 'string' }, 'string'],
    [{ type: 'integer' }, 'number'],
    [{ type: ['string', 'null'] }, 'string | null'],
    [{ type: 'string', nullable: true }, 'string | null'],
    [{ const: 'fixed' }, '"fixed"'],
    [{ enum: ['a', 'b', 3] }, '"a" | "b" | 3'],
    [{ anyOf: [{ type: 'string' }, { type: 'number' }] }, 'string | number'],
    [{ oneOf: [{ const: 1 }, { const: 2 }] }, '1 | 2'],
    [
      {
        allOf: [
          { type: 'object', properties: { a: { type: 'string' } }, required: ['a'] },
          { type: 'object', properties: { b: { type: 'number' } } },
        ],
      },
      '{\n  a: string;\n} & {\n  b?: number;\n}',
    ],
    [{ type: 'array', items: { type: 'string' } }, 'string[]'],
    [{ type: 'array', items: { anyOf: [{ type: 'string' }, { type: 'number' }] } }, 'Array<string | number>'],
    [{ type: 'array', prefixItems: [{ type: 'string' }, { type: 'number' }] }, '[string, number]'],
    [{ type: 'object', additionalProperties: { type: 'number' } }, 'Record<string, number>'],
    [{ type: 'object', additionalProperties: false }, 'Record<string, never>'],
    [{ type: 'object' }, 'Record<string, unknown>'],
    [{ type: 'object', patternProperties: { '^x': { type: 'boolean' } } }, 'Record<string, boolean>'],
    [{ $ref: '#/definitions/thing' }, 'unknown'],
    [{}, 'unknown'],
  ])('renders %j as %s', (schema, expected) => {
    expect(schemaToTypeScript(schema)).toBe(expected);
  });

  it('marks optional properties, quotes names that are not identifiers, and keeps nested descriptions', () => {
    const schema = Type.Object({
      query: Type.String({ description: 'What to look for.', minLength: 1 }),
      'page-size': Type.Optional(Type.Integer({ minimum: 1, maximum: 50 })),
      filter: Type.Optional(
        Type.Object({ tag: Type.String({ description: 'Only entries with this tag.' }) }),
      ),
    });
    expect(schemaToTypeScript(schema)).toBe(
      [
        '{',
        '  /** What to look for. */',
        '  /** minLength: 1 */',
        '  query: string;',
        '  /** minimum: 1, maximum: 50 */',
        '  "page-size"?: number;',
        '  filter?: {',
        '    /** Only entries with this tag. */',
        '    tag: string;',
        '  };',
        '}',
      ]
        .join('\n')
        .replace(
          '  /** What to look for. */\n  /** minLength: 1 */',
          '  /**\n   * What to look for.\n   * minLength: 1\n   */',
        ),
    );
  });
});

describe('ToolCatalog', () => {
  it('declares every tool with its input and output types, and the guest API', () => {
    const catalog = ToolCatalog.fromTools(
      [
        tool(
          'help_center_lookup',
          Type.Object({ query: Type.String() }),
          Type.Object({ text: Type.String() }),
        ),
        tool('ping'),
      ],
      'Agent',
    );
    expect(catalog.declarations).toContain(
      '  /** The help_center_lookup tool. */\n  help_center_lookup(args: {\n    query: string;\n  }): Promise<{\n    text: string;\n  }>;',
    );
    expect(catalog.declarations).toContain('  ping(args: Record<string, unknown>): Promise<unknown>;');
    expect(catalog.declarations).toContain('declare const ALL_TOOLS');
    expect(catalog.declarations).toContain('declare function exit(value?: unknown): never;');
    expect(parseErrors(catalog.declarations)).toEqual([]);
  });

  it('normalises names to identifiers and finds tools by name, identifier or tools.<identifier>', () => {
    expect(toIdentifier('help-center.lookup')).toBe('help_center_lookup');
    expect(toIdentifier('3d_render')).toBe('_3d_render');
    expect(toIdentifier('then')).toBe('_then');
    const catalog = ToolCatalog.fromTools([tool('help-center-lookup'), tool('then')], 'Agent');
    expect(catalog.tools.map((entry) => entry.identifier)).toEqual(['help_center_lookup', '_then']);
    expect(catalog.find('help-center-lookup')?.name).toBe('help-center-lookup');
    expect(catalog.find('help_center_lookup')?.name).toBe('help-center-lookup');
    expect(catalog.find('tools.help_center_lookup')?.name).toBe('help-center-lookup');
    expect(catalog.find('tools._then')?.name).toBe('then');
    expect(catalog.find('nope')).toBeUndefined();
  });

  it('rejects reserved names and collisions at definition time, naming the tools', () => {
    for (const name of ['call', 'parallel', 'exit', 'constructor']) {
      expect(reservedIdentifiers.has(name)).toBe(true);
      expect(() => ToolCatalog.fromTools([tool(name)], "Agent 'a' code mode")).toThrow(
        CodeModeConfigurationError,
      );
    }
    expect(() =>
      ToolCatalog.fromTools([tool('get-order'), tool('get_order')], "Agent 'a' code mode"),
    ).toThrow(
      "Agent 'a' code mode: tools 'get-order' and 'get_order' would both be tools.get_order. Rename one, or keep one model-facing with except.",
    );
  });

  it('gives the guest names, descriptions and schemas for ALL_TOOLS', () => {
    const catalog = ToolCatalog.fromTools([tool('ping')], 'Agent');
    expect(catalog.toJSON()).toEqual([
      {
        name: 'ping',
        identifier: 'ping',
        description: 'The ping tool.',
        inputSchema: expect.objectContaining({ type: 'object' }),
      },
    ]);
  });
});
