import type { JsonSchema } from '@ghost/core/provider';
import { Type } from 'typebox';
import { describe, expect, it } from 'vitest';
import { documentationComment, schemaComment, schemaToTypeScript } from './json-schema-typescript.js';
import { parseProblems, typeProblems } from './test-support/typescript-problems.js';

/** typebox schemas as the catalog receives them: plain JSON, without typebox's symbol keys. */
function json(schema: unknown): JsonSchema {
  return JSON.parse(JSON.stringify(schema)) as JsonSchema;
}

/** Every schema a test renders, so one compilation can check them all. */
const rendered: string[] = [];

function render(schema: unknown, indent?: string): string {
  const text = schemaToTypeScript(schema as JsonSchema, indent);
  rendered.push(text);
  return text;
}

describe('schemaToTypeScript: scalar types', () => {
  it.each([
    ['string', 'string'],
    ['number', 'number'],
    ['integer', 'number'],
    ['boolean', 'boolean'],
    ['null', 'null'],
  ])('renders type %j as %s', (type, expected) => {
    expect(render({ type })).toBe(expected);
  });

  it('renders an unknown type name as unknown', () => {
    expect(render({ type: 'date' })).toBe('unknown');
  });

  it('renders a list of types as a union without duplicates', () => {
    expect(render({ type: ['string', 'number'] })).toBe('string | number');
    expect(render({ type: ['integer', 'number', 'boolean'] })).toBe('number | boolean');
  });
});

describe('schemaToTypeScript: literals', () => {
  it('renders const as its JSON literal', () => {
    expect(render(json(Type.Literal('refund')))).toBe('"refund"');
    expect(render({ const: 42 })).toBe('42');
    expect(render({ const: -1.5 })).toBe('-1.5');
    expect(render({ const: false })).toBe('false');
    expect(render({ const: null })).toBe('null');
    expect(render({ const: 'say "hi"\n' })).toBe('"say \\"hi\\"\\n"');
    expect(render({ const: { kind: 'a', tags: [1, 'x'] } })).toBe('{"kind":"a","tags":[1,"x"]}');
  });

  it('renders enum as a union of literals', () => {
    expect(render(json(Type.Enum(['open', 'closed'])))).toBe('"open" | "closed"');
    expect(render({ enum: ['a', 1, true, null] })).toBe('"a" | 1 | true | null');
    expect(render({ enum: ['a', 'a'] })).toBe('"a"');
    expect(render({ enum: [] })).toBe('never');
  });

  it('lets const and enum win over type, which they only repeat', () => {
    expect(render({ type: 'string', const: 'a' })).toBe('"a"');
    expect(render({ type: 'string', enum: ['a', 'b'] })).toBe('"a" | "b"');
  });
});

describe('schemaToTypeScript: unions and intersections', () => {
  it('renders anyOf and oneOf as unions', () => {
    expect(render(json(Type.Union([Type.Literal('a'), Type.Literal(1)])))).toBe('"a" | 1');
    expect(render({ oneOf: [{ type: 'string' }, { type: 'array', items: { type: 'number' } }] })).toBe(
      'string | number[]',
    );
  });

  it('flattens nested unions and drops duplicates and never', () => {
    const schema = {
      anyOf: [{ type: 'string' }, { anyOf: [{ type: 'number' }, { type: 'string' }] }, false],
    };
    expect(render(schema)).toBe('string | number');
  });

  it('renders a union with an unconstrained member as unknown', () => {
    expect(render({ anyOf: [{ type: 'string' }, {}] })).toBe('unknown');
  });

  it('renders allOf as an intersection, parenthesising unions inside it', () => {
    const objects = Type.Intersect([Type.Object({ a: Type.String() }), Type.Object({ b: Type.Number() })]);
    expect(render(json(objects))).toBe('{\n  a: string;\n} & {\n  b: number;\n}');
    expect(
      render({ allOf: [{ anyOf: [{ type: 'string' }, { type: 'number' }] }, { enum: ['a', 1, true] }] }),
    ).toBe('(string | number) & ("a" | 1 | true)');
  });

  it('intersects a base type with its combinators and drops parts that say nothing', () => {
    // The alternatives only add formats, so the base type is all there is to say.
    expect(render({ type: 'string', anyOf: [{ format: 'email' }, { format: 'uri' }] })).toBe('string');
    // `type: 'object'` beside object alternatives would only add `Record<string, unknown> &`.
    expect(
      render({
        type: 'object',
        oneOf: [
          { type: 'object', required: ['id'], properties: { id: { type: 'string' } } },
          { type: 'object', required: ['email'], properties: { email: { type: 'string' } } },
        ],
      }),
    ).toBe('{\n  id: string;\n} | {\n  email: string;\n}');
    expect(
      render({
        type: 'object',
        required: ['kind'],
        properties: { kind: { type: 'string' } },
        anyOf: [{ properties: { a: { type: 'number' } } }, { properties: { b: { type: 'number' } } }],
      }),
    ).toBe('{\n  kind: string;\n} & ({\n  a?: number;\n} | {\n  b?: number;\n})');
  });

  it('renders an intersection with an impossible part as never', () => {
    expect(render({ allOf: [{ type: 'string' }, false] })).toBe('never');
    expect(render({ allOf: [{}, { type: 'string' }] })).toBe('string');
  });
});

describe('schemaToTypeScript: objects', () => {
  it('marks required properties plain and the others optional', () => {
    const schema = json(
      Type.Object({ topic: Type.String(), limit: Type.Optional(Type.Integer()), done: Type.Boolean() }),
    );
    expect(render(schema)).toBe(
      '{\n  topic: string;\n  /** integer */\n  limit?: number;\n  done: boolean;\n}',
    );
  });

  it('quotes property names that are not identifiers', () => {
    const schema = {
      type: 'object',
      required: ['content-type'],
      properties: {
        'content-type': { type: 'string' },
        '2x': { type: 'boolean' },
        'with space': { type: 'null' },
        $ok: { type: 'string' },
        _ok: { type: 'string' },
        default: { type: 'string' },
      },
    };
    expect(render(schema)).toBe(
      [
        '{',
        '  "content-type": string;',
        '  "2x"?: boolean;',
        '  "with space"?: null;',
        '  $ok?: string;',
        '  _ok?: string;',
        '  default?: string;',
        '}',
      ].join('\n'),
    );
  });

  it('renders an object without properties as a record', () => {
    expect(render({ type: 'object' })).toBe('Record<string, unknown>');
    expect(render(json(Type.Object({})))).toBe('Record<string, unknown>');
    expect(render({ type: 'object', properties: {}, additionalProperties: false })).toBe(
      'Record<string, never>',
    );
    expect(render({ type: 'object', additionalProperties: true })).toBe('Record<string, unknown>');
    expect(render({ type: 'object', additionalProperties: { type: 'number' } })).toBe(
      'Record<string, number>',
    );
  });

  it('adds nothing for additionalProperties: false', () => {
    const schema = json(Type.Object({ a: Type.String() }, { additionalProperties: false }));
    expect(render(schema)).toBe('{\n  a: string;\n}');
  });

  it('adds an index signature for an additionalProperties schema, widened to fit the named ones', () => {
    const schema = {
      type: 'object',
      required: ['name'],
      properties: { name: { type: 'string' }, size: { type: 'number' } },
      additionalProperties: { type: 'boolean', description: 'A feature flag.' },
    };
    expect(render(schema)).toBe(
      [
        '{',
        '  name: string;',
        '  size?: number;',
        '  /** A feature flag. */',
        '  [key: string]: boolean | string | number;',
        '}',
      ].join('\n'),
    );
    expect(render({ properties: { name: { type: 'string' } }, additionalProperties: true })).toBe(
      '{\n  name?: string;\n  [key: string]: unknown;\n}',
    );
  });

  it('renders patternProperties as an index signature of their union', () => {
    expect(render(json(Type.Record(Type.String(), Type.Number())))).toBe('Record<string, number>');
    const schema = {
      type: 'object',
      patternProperties: { '^s_': { type: 'string' }, '^n_': { type: 'number' } },
    };
    expect(render(schema)).toBe('Record<string, string | number>');
    expect(
      render({
        type: 'object',
        properties: { id: { type: 'string' } },
        patternProperties: { x: { type: 'string' } },
      }),
    ).toBe('{\n  id?: string;\n  [key: string]: string;\n}');
  });

  it('reads properties without type: object', () => {
    expect(render({ properties: { a: { type: 'string' } }, required: ['a'] })).toBe('{\n  a: string;\n}');
  });

  it('indents nested objects by two spaces a level, starting from indent', () => {
    const schema = json(
      Type.Object({ customer: Type.Object({ address: Type.Object({ city: Type.String() }) }) }),
    );
    expect(render(schema)).toBe(
      ['{', '  customer: {', '    address: {', '      city: string;', '    };', '  };', '}'].join('\n'),
    );
    expect(render(json(Type.Object({ a: Type.String() })), '    ')).toBe('{\n      a: string;\n    }');
  });
});

describe('schemaToTypeScript: arrays and tuples', () => {
  it('renders items as T[], and Array<T> when T has an operator', () => {
    expect(render(json(Type.Array(Type.String())))).toBe('string[]');
    expect(render(json(Type.Array(Type.Union([Type.String(), Type.Null()]))))).toBe('Array<string | null>');
    expect(render({ type: 'array', items: { allOf: [{ type: 'string' }, { enum: ['a'] }] } })).toBe(
      'Array<string & "a">',
    );
    expect(render({ type: 'array', items: { type: 'array', items: { type: 'integer' } } })).toBe(
      'number[][]',
    );
    expect(render({ type: 'array' })).toBe('unknown[]');
    expect(render({ items: { type: 'boolean' } })).toBe('boolean[]');
    expect(render({ items: { const: -1 } })).toBe('-1[]');
  });

  it('renders an array of objects with the objects spread over lines', () => {
    const schema = json(Type.Array(Type.Object({ id: Type.String() })));
    expect(render(schema)).toBe('{\n  id: string;\n}[]');
  });

  it('renders typebox tuples (items as a list) and prefixItems as tuples', () => {
    expect(render(json(Type.Tuple([Type.String(), Type.Number()])))).toBe('[string, number]');
    expect(render({ type: 'array', prefixItems: [{ type: 'string' }, { type: 'boolean' }] })).toBe(
      '[string, boolean]',
    );
    expect(render({ type: 'array', items: [] })).toBe('[]');
  });

  it('adds a rest element for an explicit rest schema and ? after minItems', () => {
    expect(
      render({
        type: 'array',
        prefixItems: [{ type: 'string' }],
        items: { anyOf: [{ type: 'number' }, { type: 'null' }] },
      }),
    ).toBe('[string, ...Array<number | null>]');
    expect(render({ type: 'array', items: [{ type: 'string' }], additionalItems: { type: 'number' } })).toBe(
      '[string, ...number[]]',
    );
    expect(
      render({
        type: 'array',
        minItems: 1,
        prefixItems: [{ type: 'string' }, { type: 'number' }, { type: ['string', 'null'] }],
      }),
    ).toBe('[string, number?, (string | null)?]');
  });
});

describe('schemaToTypeScript: nullable', () => {
  it('adds | null for nullable: true and for type [x, null]', () => {
    expect(render({ type: 'string', nullable: true })).toBe('string | null');
    expect(render({ type: ['string', 'null'] })).toBe('string | null');
    expect(render({ type: ['null', 'string'], nullable: true })).toBe('null | string');
    expect(render(json(Type.Union([Type.Number(), Type.Null()])))).toBe('number | null');
    expect(render({ type: 'array', items: { type: 'string' }, nullable: true })).toBe('string[] | null');
    expect(render({ type: ['object', 'null'], required: ['a'], properties: { a: { type: 'string' } } })).toBe(
      '{\n  a: string;\n} | null',
    );
  });

  it('keeps unknown as it is, since it already admits null', () => {
    expect(render({ nullable: true })).toBe('unknown');
  });
});

describe('schemaToTypeScript: what it cannot express', () => {
  it('renders $ref, not, empty and true schemas as unknown, and false as never', () => {
    expect(render(json(Type.Ref('Customer')))).toBe('unknown');
    expect(render(json(Type.Any()))).toBe('unknown');
    expect(render(json(Type.Unknown()))).toBe('unknown');
    expect(render({ not: { type: 'string' } })).toBe('unknown');
    expect(render(true as never)).toBe('unknown');
    expect(render(false as never)).toBe('never');
  });

  it('ignores malformed keywords instead of throwing', () => {
    expect(render({ type: 'object', properties: 'none', required: 'a' })).toBe('Record<string, unknown>');
    expect(render({ anyOf: 'no', type: 'string' })).toBe('string');
    expect(render({ type: 'object', properties: { a: 7 } })).toBe('{\n  a?: unknown;\n}');
  });
});

describe('schemaToTypeScript: doc comments', () => {
  it('puts a property description in a JSDoc line above it', () => {
    const schema = json(
      Type.Object({
        topic: Type.String({ description: 'What the customer asked about.' }),
        plain: Type.String(),
      }),
    );
    expect(render(schema)).toBe(
      '{\n  /** What the customer asked about. */\n  topic: string;\n  plain: string;\n}',
    );
  });

  it('keeps the descriptions of nested properties, inside arrays and unions too', () => {
    const schema = json(
      Type.Object({
        order: Type.Object(
          { id: Type.String({ description: 'The order number, without the #.' }) },
          { description: 'The order to refund.' },
        ),
        lines: Type.Array(Type.Object({ sku: Type.String({ description: 'Stock keeping unit.' }) })),
        contact: Type.Union([
          Type.Object({ email: Type.String({ format: 'email' }) }),
          Type.Object({ phone: Type.String({ pattern: '^\\+[0-9]+$' }) }),
        ]),
      }),
    );
    expect(render(schema)).toBe(
      [
        '{',
        '  /** The order to refund. */',
        '  order: {',
        '    /** The order number, without the #. */',
        '    id: string;',
        '  };',
        '  lines: {',
        '    /** Stock keeping unit. */',
        '    sku: string;',
        '  }[];',
        '  contact: {',
        '    /** format: "email" */',
        '    email: string;',
        '  } | {',
        '    /** pattern: "^\\\\+[0-9]+$" */',
        '    phone: string;',
        '  };',
        '}',
      ].join('\n'),
    );
  });

  it('lists constraints TypeScript cannot express after the description, in a fixed order', () => {
    const schema = {
      type: 'object',
      properties: {
        limit: { type: 'integer', maximum: 100, minimum: 1, default: 20, description: 'Page size.' },
        code: { type: 'string', minLength: 2, maxLength: 8, examples: ['AB12'] },
        when: { type: 'string', format: 'date-time' },
      },
    };
    expect(render(schema)).toBe(
      [
        '{',
        '  /**',
        '   * Page size.',
        '   * integer, default: 20, minimum: 1, maximum: 100',
        '   */',
        '  limit?: number;',
        '  /** minLength: 2, maxLength: 8, examples: ["AB12"] */',
        '  code?: string;',
        '  /** format: "date-time" */',
        '  when?: string;',
        '}',
      ].join('\n'),
    );
  });

  it("moves an array's item instructions up to the array property", () => {
    const schema = json(
      Type.Object({
        tags: Type.Array(Type.String({ description: 'A tag', maxLength: 20 }), { maxItems: 5 }),
      }),
    );
    expect(render(schema)).toBe(
      '{\n  /**\n   * maxItems: 5\n   * Each item: A tag; maxLength: 20\n   */\n  tags: string[];\n}',
    );
  });

  it('keeps multi-line descriptions, uses a title without a description, and marks deprecated', () => {
    const schema = {
      type: 'object',
      properties: {
        note: { type: 'string', description: '  First line.\r\n\nThird line.  \n' },
        name: { type: 'string', title: 'Display name' },
        old: { type: 'string', deprecated: true },
      },
    };
    expect(render(schema)).toBe(
      [
        '{',
        '  /**',
        '   * First line.',
        '   *',
        '   * Third line.',
        '   */',
        '  note?: string;',
        '  /** Display name */',
        '  name?: string;',
        '  /** @deprecated */',
        '  old?: string;',
        '}',
      ].join('\n'),
    );
  });

  it('escapes */ so a description cannot end the comment', () => {
    const schema = {
      type: 'object',
      properties: { glob: { type: 'string', description: 'Like src/**/*.ts' } },
    };
    const text = render(schema);
    expect(text).toBe('{\n  /** Like src/**\\/*.ts */\n  glob?: string;\n}');
    expect(parseProblems(`type Glob = ${text};`)).toEqual([]);
  });

  it('gives the comment helpers nothing to say for schemas without descriptions', () => {
    expect(schemaComment({ type: 'string' }, '  ')).toBe('');
    expect(schemaComment(true, '  ')).toBe('');
    expect(schemaComment({ description: '   ' }, '')).toBe('');
    expect(documentationComment([], '  ')).toBe('');
    expect(documentationComment(['One.'], '  ')).toBe('  /** One. */\n');
  });
});

describe('schemaToTypeScript: output', () => {
  it('is deterministic and does not depend on the order of required', () => {
    const first = {
      type: 'object',
      required: ['a', 'b'],
      properties: { a: { type: 'string' }, b: { type: 'string' } },
    };
    const second = {
      type: 'object',
      required: ['b', 'a'],
      properties: { a: { type: 'string' }, b: { type: 'string' } },
    };
    expect(render(first)).toBe(render(first));
    expect(render(first)).toBe(render(second));
  });

  it('has a type check that notices invalid declarations', () => {
    expect(typeProblems('type Conflict = { a: number; [key: string]: string };')).toHaveLength(1);
    expect(parseProblems('type Broken = { a: string | };')).toHaveLength(1);
  });

  it('is valid TypeScript for every schema rendered in these tests', () => {
    // Runs last in the file, after every other test has added to `rendered`.
    expect(rendered.length).toBeGreaterThan(50);
    const source = rendered.map((text, position) => `type Rendered${position} = ${text};`).join('\n');
    expect(parseProblems(source)).toEqual([]);
    expect(typeProblems(source)).toEqual([]);
  });
});
