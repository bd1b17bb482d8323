/**
 * Reading a JSON Schema for the declarations a model reads, whatever the language they are
 * rendered in (`json-schema-typescript.ts`, `json-schema-python.ts`): a schema's keywords may be
 * missing or malformed, so every read checks what it finds.
 */

/** A schema object as the renderers read it: any keyword may be missing or malformed. */
export type SchemaObject = Readonly<Record<string, unknown>>;

/**
 * Keywords a language's types cannot express but the model should still obey, shown beside the
 * description, in this order so the output never depends on the schema's key order.
 */
const hintKeywords = [
  'default',
  'minimum',
  'maximum',
  'exclusiveMinimum',
  'exclusiveMaximum',
  'multipleOf',
  'minLength',
  'maxLength',
  'pattern',
  'format',
  'minItems',
  'maxItems',
  'uniqueItems',
  'minProperties',
  'maxProperties',
  'examples',
] as const;

export function isSchemaObject(value: unknown): value is SchemaObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The schema's constraints as `keyword: value` texts, in {@link hintKeywords}' order. */
export function constraintHints(schema: SchemaObject): string[] {
  const found: string[] = [];
  for (const keyword of hintKeywords) {
    if (schema[keyword] !== undefined) found.push(`${keyword}: ${JSON.stringify(schema[keyword])}`);
  }
  return found;
}

/** The schema's description, or its title when it has none. */
export function descriptionOf(schema: SchemaObject): string | undefined {
  for (const keyword of ['description', 'title']) {
    const value = schema[keyword];
    if (typeof value === 'string' && value.trim() !== '') return value.trim();
  }
  return undefined;
}
