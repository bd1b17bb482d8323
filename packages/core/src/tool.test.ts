import Type from 'typebox';
import { describe, expect, it } from 'vitest';
import { ConfigurationError } from './errors.js';
import { defaultToolTimeoutMs, defineTool } from './tool.js';

const input = Type.Object({ topic: Type.String(), limit: Type.Optional(Type.Integer({ minimum: 1 })) });
const execute = () => 'ok';

describe('defineTool', () => {
  it('accepts names of 1 to 64 letters, digits, _ and -', () => {
    for (const name of ['a', 'help_center-lookup2', 'x'.repeat(64)]) {
      expect(defineTool({ name, description: 'd', input, execute }).name).toBe(name);
    }
  });

  it.each(['', 'x'.repeat(65), 'has space', 'dot.name', 'ünicode', 'slash/name'])(
    'rejects the name %j with a ConfigurationError',
    (name) => {
      const define = () => defineTool({ name, description: 'd', input, execute });
      expect(define).toThrow(ConfigurationError);
      expect(define).toThrow(/1 to 64 letters, digits/);
    },
  );

  it('rejects an input schema that is not an object schema', () => {
    for (const schema of [Type.String(), Type.Array(Type.String()), undefined]) {
      const define = () => defineTool({ name: 'bad', description: 'd', input: schema as never, execute });
      expect(define).toThrow(ConfigurationError);
      expect(define).toThrow(/object schema as input/);
    }
  });

  it('rejects a missing execute and a non-positive timeout', () => {
    expect(() => defineTool({ name: 't', description: 'd', input } as never)).toThrow(/execute/);
    expect(() => defineTool({ name: 't', description: 'd', input, execute, timeoutMs: 0 })).toThrow(
      /timeoutMs/,
    );
  });

  it('has defaults and plain JSON schemas for the model', () => {
    const tool = defineTool({ name: 'lookup', description: 'Looks up', input, execute });
    expect(tool.timeoutMs).toBe(defaultToolTimeoutMs);
    expect(tool.exclusive).toBe(false);
    expect(tool.inputJsonSchema).toEqual({
      type: 'object',
      required: ['topic'],
      properties: { topic: { type: 'string' }, limit: { type: 'integer', minimum: 1 } },
    });
    expect(tool.outputJsonSchema).toBeUndefined();
    expect(Object.isFrozen(tool)).toBe(true);
  });

  it('validates input with the compiled schema and reports paths', () => {
    const tool = defineTool({ name: 'lookup', description: 'd', input, execute });
    expect(tool.validateInput({ topic: 'refunds' })).toEqual([]);
    expect(tool.validateInput({ topic: 3, limit: 0 })).toEqual([
      { path: '/topic', message: 'must be string' },
      { path: '/limit', message: 'must be >= 1' },
    ]);
  });

  it('validates output when an output schema is given', () => {
    const tool = defineTool({
      name: 'count',
      description: 'd',
      input,
      output: Type.Number(),
      execute: () => 1,
    });
    expect(tool.validateOutput(1)).toEqual([]);
    expect(tool.validateOutput('one')).toHaveLength(1);
  });
  it('compiles at the first validation: a schema typebox cannot compile fails there, as a ConfigurationError', () => {
    const tool = defineTool({
      name: 'broken_pattern',
      description: 'd',
      input: Type.Object({ code: Type.String({ pattern: '[' }) }),
      execute,
    });
    for (let attempt = 0; attempt < 2; attempt += 1) {
      let thrown: unknown;
      try {
        tool.validateInput({ code: 'a' });
      } catch (error) {
        thrown = error;
      }
      expect(thrown).toBeInstanceOf(ConfigurationError);
      expect(thrown).toMatchObject({ code: 'TOOL_SCHEMA_INVALID' });
      expect((thrown as Error).message).toMatch(
        /^Tool 'broken_pattern' has a schema typebox cannot compile: /,
      );
    }
  });
});
