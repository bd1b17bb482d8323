import { createRequire } from 'node:module';
import type { TSchema } from 'typebox';
import type * as SchemaCompiler from 'typebox/schema';
import type { JsonSchema } from './model.js';

/** One reason a value does not match a schema. */
export interface SchemaProblem {
  /** A JSON pointer to the offending value; empty for the value itself. */
  readonly path: string;
  readonly message: string;
}

type SchemaCompilerModule = typeof SchemaCompiler;

// `typebox/schema` is the narrowest typebox entry that compiles and explains a schema (about a
// third of the modules of `typebox/compile`, which adds the Value operations Ghost never uses),
// and loading it is most of what importing Ghost used to cost. So it loads when a value is first
// validated, never at import: see docs/decisions/2026-12-04-import-and-session-open-time.md.
let compiler: SchemaCompilerModule | undefined;
let compilerLoading: Promise<SchemaCompilerModule> | undefined;

/**
 * Loads typebox's schema compiler ahead of a validation, without blocking the event loop on file
 * reads. The tool-call pipeline and structured output await it before they validate; after it
 * resolves, validation never loads anything. A static specifier, so bundlers include the module.
 */
export function loadSchemaCompiler(): Promise<void> {
  if (compiler !== undefined) return Promise.resolve();
  compilerLoading ??= import('typebox/schema').then(
    (loaded) => {
      compiler ??= loaded;
      return compiler;
    },
    (error: unknown) => {
      // A failed load may succeed later (a package installed meanwhile); do not cache the failure.
      compilerLoading = undefined;
      throw error;
    },
  );
  return compilerLoading.then(() => undefined);
}

/**
 * The schema compiler, loaded synchronously when a synchronous caller (`tool.validateInput` called
 * directly) gets here first. `require()` of an ES module (Node 20.19 and later) resolves the same
 * file as `import` and shares its instance, so typebox is never loaded twice.
 */
function schemaCompiler(): SchemaCompilerModule {
  compiler ??= createRequire(import.meta.url)('typebox/schema') as SchemaCompilerModule;
  return compiler;
}

/** The JSON Schema of a typebox schema, as sent to a model. */
export function toJsonSchema(schema: TSchema): JsonSchema {
  // typebox schemas are JSON Schema already; a JSON round trip drops its symbol-keyed metadata.
  return JSON.parse(JSON.stringify(schema)) as JsonSchema;
}

/** A schema's check, compiled at its first use. */
export type SchemaValidator = (value: unknown) => readonly SchemaProblem[];

/**
 * Makes the check that lists the problems of a value (none when it matches). The schema is
 * compiled at the first validation, not here, so defining tools costs no compiler; a schema
 * typebox cannot compile (an invalid `pattern`) throws `onCompileError(cause)` from that first
 * validation, and again from every later one.
 */
export function compileValidator(
  schema: TSchema | undefined,
  onCompileError: (cause: unknown) => Error,
): SchemaValidator {
  if (schema === undefined) return () => [];
  let validator: SchemaCompiler.Validator | undefined;
  return (value) => {
    if (validator === undefined) {
      // Outside the try: a typebox that cannot be loaded is not a schema mistake.
      const { Compile } = schemaCompiler();
      try {
        validator = Compile(schema as SchemaCompiler.XSchema);
      } catch (cause) {
        throw onCompileError(cause);
      }
    }
    if (validator.Check(value)) return [];
    const [, errors] = validator.Errors(value);
    return errors.map((error) => ({ path: error.instancePath, message: error.message }));
  };
}
