import type { JsonSchema } from '@ghost/core';

type Schema = Record<string, unknown>;

const identifierPattern = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

/** Keywords worth telling the model about a value, shown after its description. */
const hintKeywords = [
  'default',
  'minimum',
  'maximum',
  'exclusiveMinimum',
  'exclusiveMaximum',
  'minLength',
  'maxLength',
  'minItems',
  'maxItems',
  'pattern',
  'format',
  'examples',
] as const;

function isSchema(value: unknown): value is Schema {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function propertyKey(name: string): string {
  return identifierPattern.test(name) ? name : JSON.stringify(name);
}

/** A JSDoc block for a schema's description and hints, or nothing when it has neither. */
export function schemaComment(schema: unknown, indent: string): string {
  if (!isSchema(schema)) return '';
  const lines: string[] = [];
  if (typeof schema.description === 'string' && schema.description.trim() !== '') {
    lines.push(...schema.description.trim().split('\n'));
  }
  const hints: string[] = [];
  for (const keyword of hintKeywords) {
    if (schema[keyword] !== undefined) hints.push(`${keyword}: ${JSON.stringify(schema[keyword])}`);
  }
  if (hints.length > 0) lines.push(hints.join(', '));
  if (lines.length === 0) return '';
  // A `*/` inside a description would end the comment early.
  const safe = lines.map((line) => line.replaceAll('*/', '*\\/'));
  if (safe.length === 1) return `${indent}/** ${safe[0]} */\n`;
  return `${indent}/**\n${safe.map((line) => `${indent} * ${line}`).join('\n')}\n${indent} */\n`;
}

function needsParentheses(type: string): boolean {
  let depth = 0;
  for (const character of type) {
    if (character === '{' || character === '(' || character === '[' || character === '<') depth += 1;
    else if (character === '}' || character === ')' || character === ']' || character === '>') depth -= 1;
    else if (depth === 0 && (character === '|' || character === '&')) return true;
  }
  return false;
}

function union(types: readonly string[]): string {
  const unique = [...new Set(types)];
  if (unique.includes('unknown')) return 'unknown';
  return unique
    .map((type) => (type.includes('&') && needsParentheses(type) ? `(${type})` : type))
    .join(' | ');
}

function intersection(types: readonly string[]): string {
  return types.map((type) => (needsParentheses(type) ? `(${type})` : type)).join(' & ');
}

function arrayOf(type: string): string {
  return needsParentheses(type) ? `Array<${type}>` : `${type}[]`;
}

function literal(value: unknown): string {
  return value === undefined ? 'undefined' : JSON.stringify(value);
}

function renderObject(schema: Schema, indent: string): string {
  const properties = isSchema(schema.properties) ? schema.properties : {};
  const required = new Set(Array.isArray(schema.required) ? (schema.required as unknown[]) : []);
  const inner = `${indent}  `;
  const members: string[] = [];
  for (const [name, propertySchema] of Object.entries(properties)) {
    const optional = required.has(name) ? '' : '?';
    members.push(
      `${schemaComment(propertySchema, inner)}${inner}${propertyKey(name)}${optional}: ${render(propertySchema, inner)};`,
    );
  }
  const indexTypes: string[] = [];
  if (isSchema(schema.patternProperties)) {
    for (const patternSchema of Object.values(schema.patternProperties))
      indexTypes.push(render(patternSchema, inner));
  }
  const additional = schema.additionalProperties;
  if (isSchema(additional)) indexTypes.push(render(additional, inner));
  else if (additional === true) indexTypes.push('unknown');
  const hasProperties = members.length > 0;
  if (!hasProperties && indexTypes.length === 0) {
    return additional === false ? 'Record<string, never>' : 'Record<string, unknown>';
  }
  if (!hasProperties) return `Record<string, ${union(indexTypes)}>`;
  if (indexTypes.length > 0) {
    // An index signature must admit every named property's type too.
    members.push(`${inner}[key: string]: unknown;`);
  }
  return `{\n${members.join('\n')}\n${indent}}`;
}

function renderType(schema: Schema, type: string, indent: string): string {
  switch (type) {
    case 'string':
      return 'string';
    case 'number':
    case 'integer':
      return 'number';
    case 'boolean':
      return 'boolean';
    case 'null':
      return 'null';
    case 'array':
      return renderArray(schema, indent);
    case 'object':
      return renderObject(schema, indent);
    default:
      return 'unknown';
  }
}

function renderArray(schema: Schema, indent: string): string {
  const tuple = Array.isArray(schema.prefixItems)
    ? schema.prefixItems
    : Array.isArray(schema.items)
      ? schema.items
      : undefined;
  if (tuple) return `[${tuple.map((item) => render(item, indent)).join(', ')}]`;
  return arrayOf(schema.items === undefined ? 'unknown' : render(schema.items, indent));
}

/**
 * Renders a JSON Schema as a TypeScript type, as the model will read it in the tool
 * declarations: `const`, `enum`, `anyOf`/`oneOf` (unions), `allOf` (intersections), objects with
 * optional properties and their descriptions, records, arrays, tuples and nullable values.
 * Anything it cannot express becomes `unknown`, which is never wrong, only less precise.
 *
 * @example
 * ```ts
 * schemaToTypeScript({ type: 'object', properties: { query: { type: 'string' } }, required: ['query'] });
 * // '{\n  query: string;\n}'
 * ```
 */
export function schemaToTypeScript(schema: JsonSchema | unknown, indent = ''): string {
  return render(schema, indent);
}

function render(schema: unknown, indent: string): string {
  if (schema === true) return 'unknown';
  if (schema === false) return 'never';
  if (!isSchema(schema)) return 'unknown';
  const nullable = schema.nullable === true;
  const rendered = renderNonNullable(schema, indent);
  return nullable && rendered !== 'unknown' ? union([rendered, 'null']) : rendered;
}

function renderNonNullable(schema: Schema, indent: string): string {
  if (schema.const !== undefined) return literal(schema.const);
  if (Array.isArray(schema.enum)) return union(schema.enum.map(literal));
  const alternatives = Array.isArray(schema.anyOf)
    ? schema.anyOf
    : Array.isArray(schema.oneOf)
      ? schema.oneOf
      : undefined;
  if (alternatives) return union(alternatives.map((each) => render(each, indent)));
  if (Array.isArray(schema.allOf)) return intersection(schema.allOf.map((each) => render(each, indent)));
  if (Array.isArray(schema.type))
    return union(schema.type.map((type) => renderType(schema, String(type), indent)));
  if (typeof schema.type === 'string') return renderType(schema, schema.type, indent);
  if (isSchema(schema.properties)) return renderObject(schema, indent);
  if (schema.items !== undefined || schema.prefixItems !== undefined) return renderArray(schema, indent);
  return 'unknown';
}
