// The keywords OpenAI's strict structured outputs accept. A schema using anything else is sent
// with `strict: false`: OpenAI would refuse it in strict mode, and the agent validates the
// answer against the full schema either way.
const strictKeywords = new Set([
  'type',
  'properties',
  'required',
  'additionalProperties',
  'items',
  'anyOf',
  'enum',
  'const',
  'description',
  'title',
  '$defs',
  'definitions',
  '$ref',
  '$schema',
  'format',
  'pattern',
  'minimum',
  'maximum',
  'exclusiveMinimum',
  'exclusiveMaximum',
  'multipleOf',
  'minItems',
  'maxItems',
]);

const maxDepth = 64;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function describesObject(schema: Record<string, unknown>): boolean {
  const { type } = schema;
  return type === 'object' || (Array.isArray(type) && type.includes('object')) || 'properties' in schema;
}

function isStrictNode(schema: unknown, depth: number): boolean {
  if (!isRecord(schema) || depth > maxDepth) return false;
  for (const key of Object.keys(schema)) if (!strictKeywords.has(key)) return false;
  if (describesObject(schema)) {
    if (schema.additionalProperties !== false) return false;
    const properties = schema.properties ?? {};
    const required = schema.required ?? [];
    if (!isRecord(properties) || !Array.isArray(required)) return false;
    for (const [name, property] of Object.entries(properties)) {
      if (!required.includes(name) || !isStrictNode(property, depth + 1)) return false;
    }
  }
  if ('items' in schema && !isStrictNode(schema.items, depth + 1)) return false;
  if ('anyOf' in schema) {
    if (!Array.isArray(schema.anyOf)) return false;
    for (const branch of schema.anyOf) if (!isStrictNode(branch, depth + 1)) return false;
  }
  for (const key of ['$defs', 'definitions']) {
    if (!(key in schema)) continue;
    const definitions = schema[key];
    if (!isRecord(definitions)) return false;
    for (const definition of Object.values(definitions))
      if (!isStrictNode(definition, depth + 1)) return false;
  }
  return true;
}

/**
 * Whether OpenAI's strict mode accepts `schema` as it is: an object at the root, every object
 * closed (`additionalProperties: false`) with every property required, and only keywords strict
 * mode supports. Optional fields make a schema non-strict; express them as required and
 * nullable (`anyOf` with `null`) to get strict decoding.
 */
export function isStrictJsonSchema(schema: unknown): boolean {
  return isRecord(schema) && schema.type === 'object' && isStrictNode(schema, 0);
}
