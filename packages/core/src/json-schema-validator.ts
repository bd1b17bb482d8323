import type { TSchema } from 'typebox';
import { Compile } from 'typebox/compile';
import type { JsonSchema } from './model.js';

/** One reason a value does not match a schema. */
export interface SchemaProblem {
  /** A JSON pointer to the offending value; empty for the value itself. */
  readonly path: string;
  readonly message: string;
}

/** The JSON Schema of a typebox schema, as sent to a model. */
export function toJsonSchema(schema: TSchema): JsonSchema {
  // typebox schemas are JSON Schema already; a JSON round trip drops its symbol-keyed metadata.
  return JSON.parse(JSON.stringify(schema)) as JsonSchema;
}

/** Compiles a schema into a check that lists the problems of a value (none when it matches). */
export function compileValidator(schema: TSchema | undefined): (value: unknown) => readonly SchemaProblem[] {
  if (schema === undefined) return () => [];
  const validator = Compile(schema);
  return (value) => {
    if (validator.Check(value)) return [];
    return [...validator.Errors(value)].map((error) => ({
      path: error.instancePath,
      message: error.message,
    }));
  };
}
