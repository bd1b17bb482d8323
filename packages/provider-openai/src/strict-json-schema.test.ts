import { describe, expect, it } from 'vitest';
import { isOpenAIReasoningModel } from './reasoning-model.js';
import { isStrictJsonSchema } from './strict-json-schema.js';

const closed = (properties: Record<string, unknown>) => ({
  type: 'object',
  properties,
  required: Object.keys(properties),
  additionalProperties: false,
});

describe('isStrictJsonSchema', () => {
  it('accepts closed objects with every property required, nested through items, anyOf and $defs', () => {
    expect(isStrictJsonSchema(closed({ name: { type: 'string' } }))).toBe(true);
    expect(
      isStrictJsonSchema({
        ...closed({
          items: { type: 'array', items: closed({ sku: { type: 'string', pattern: '^[A-Z]+$' } }) },
          note: { anyOf: [{ type: 'string' }, { type: 'null' }] },
          address: { $ref: '#/$defs/address' },
        }),
        $defs: { address: closed({ city: { type: 'string' } }) },
      }),
    ).toBe(true);
  });

  it('refuses optional properties, open objects, unsupported keywords and non-object roots', () => {
    expect(isStrictJsonSchema({ ...closed({ a: { type: 'string' } }), required: [] })).toBe(false);
    expect(isStrictJsonSchema({ ...closed({ a: { type: 'string' } }), additionalProperties: true })).toBe(
      false,
    );
    expect(isStrictJsonSchema(closed({ a: { type: 'object', properties: {} } }))).toBe(false);
    expect(isStrictJsonSchema(closed({ a: { allOf: [{ type: 'string' }] } }))).toBe(false);
    expect(isStrictJsonSchema(closed({ a: { type: 'string', minLength: 1 } }))).toBe(false);
    expect(isStrictJsonSchema({ type: 'array', items: { type: 'string' } })).toBe(false);
    expect(isStrictJsonSchema({ anyOf: [closed({})] })).toBe(false);
    expect(isStrictJsonSchema(closed({ a: true }))).toBe(false);
  });

  it('gives up on schemas nested deeper than it checks', () => {
    let schema: Record<string, unknown> = { type: 'string' };
    for (let depth = 0; depth < 100; depth += 1) schema = closed({ next: schema });
    expect(isStrictJsonSchema(schema)).toBe(false);
  });
});

describe('isOpenAIReasoningModel', () => {
  it.each([
    ['o3', true],
    ['o4-mini', true],
    ['gpt-5', true],
    ['gpt-5.1-codex', true],
    ['gpt-5-chat-latest', false],
    ['gpt-4.1', false],
    ['gpt-4o-mini', false],
  ])('%s → %s', (modelId, expected) => {
    expect(isOpenAIReasoningModel(modelId)).toBe(expected);
  });
});
