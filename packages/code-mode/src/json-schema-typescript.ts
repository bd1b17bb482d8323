import type { JsonSchema } from '@ghost/core/provider';
import { constraintHints, descriptionOf, isSchemaObject, type SchemaObject } from './json-schema-reading.js';

/**
 * A rendered type with what its parent needs to know to combine it: the top-level operator
 * decides where parentheses go, and the operands let nested unions and intersections flatten
 * (`A | (B | C)` becomes `A | B | C`) and drop duplicates.
 */
interface TypeExpression {
  readonly text: string;
  readonly operator: '|' | '&' | undefined;
  /** The operands of `operator`, or just `text` when there is none. */
  readonly operands: readonly string[];
}

const identifierPattern = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

const unknownType = single('unknown');
const neverType = single('never');
const nullType = single('null');

/** The catch-all object type, which says nothing an intersection's other operands do not. */
const anyObjectText = 'Record<string, unknown>';

function single(text: string): TypeExpression {
  return { text, operator: undefined, operands: [text] };
}

function propertyKey(name: string): string {
  return identifierPattern.test(name) ? name : JSON.stringify(name);
}

function literal(value: unknown): TypeExpression {
  // JSON text is a valid TypeScript literal type for every JSON value: strings, numbers,
  // booleans, null, and objects and arrays (as type literals and tuples).
  return single(JSON.stringify(value));
}

function union(expressions: readonly TypeExpression[]): TypeExpression {
  const members: string[] = [];
  for (const expression of expressions) {
    // `unknown` absorbs every other member and `never` adds nothing to a union.
    if (expression.text === 'unknown') return unknownType;
    if (expression.text === 'never') continue;
    const operands = expression.operator === '|' ? expression.operands : [expression.text];
    for (const operand of operands) {
      if (!members.includes(operand)) members.push(operand);
    }
  }
  if (members.length === 0) return neverType;
  if (members.length === 1) {
    const only = members[0]!;
    return expressions.find((expression) => expression.text === only) ?? single(only);
  }
  return { text: members.join(' | '), operator: '|', operands: members };
}

function intersection(expressions: readonly TypeExpression[]): TypeExpression {
  const unique: TypeExpression[] = [];
  for (const expression of expressions) {
    // `never` absorbs every other operand and `unknown` adds nothing to an intersection.
    if (expression.text === 'never') return neverType;
    if (expression.text === 'unknown') continue;
    if (!unique.some((each) => each.text === expression.text)) unique.push(expression);
  }
  const kept: TypeExpression[] = [];
  for (const expression of unique) {
    // `type: 'object'` beside `anyOf` objects would only add `Record<string, unknown> & ...`.
    if (expression.text === anyObjectText && unique.length > 1) continue;
    kept.push(expression);
  }
  if (kept.length === 0) return unknownType;
  if (kept.length === 1) return kept[0]!;
  const operands: string[] = [];
  for (const expression of kept) {
    const parts =
      expression.operator === '&'
        ? expression.operands
        : [expression.operator === '|' ? `(${expression.text})` : expression.text];
    for (const part of parts) {
      if (!operands.includes(part)) operands.push(part);
    }
  }
  return { text: operands.join(' & '), operator: '&', operands };
}

function arrayOf(element: TypeExpression): TypeExpression {
  // `A | B[]` would mean `A | (B[])`, so any operator needs the generic form.
  return single(element.operator === undefined ? `${element.text}[]` : `Array<${element.text}>`);
}

function hints(schema: SchemaObject): string[] {
  const found: string[] = [];
  // TypeScript has only `number`, so the comment keeps the model from sending 2.5 to an integer.
  const types = Array.isArray(schema.type) ? schema.type : [schema.type];
  if (types.includes('integer')) found.push('integer');
  found.push(...constraintHints(schema));
  return found;
}

/**
 * A `/** ... *\/` block of `lines` at `indent`, ending in a newline so it can sit right before
 * the member it documents; empty when there are no lines. One line stays on one line.
 */
export function documentationComment(lines: readonly string[], indent: string): string {
  const safe: string[] = [];
  for (const line of lines) {
    for (const part of line.split(/\r?\n/)) {
      // A `*/` inside a description would end the comment early and break the declarations.
      safe.push(part.trimEnd().replaceAll('*/', '*\\/'));
    }
  }
  while (safe.length > 0 && safe[safe.length - 1] === '') safe.pop();
  if (safe.length === 0) return '';
  if (safe.length === 1) return `${indent}/** ${safe[0]} */\n`;
  const body: string[] = [];
  for (const line of safe) body.push(line === '' ? `${indent} *` : `${indent} * ${line}`);
  return `${indent}/**\n${body.join('\n')}\n${indent} */\n`;
}

/**
 * The doc comment for a property with this schema: its description (or title), then the
 * constraints TypeScript cannot express (`default`, `minimum`, `pattern`, `format`, ...), then
 * the same for an array's items. Empty when there is nothing to say.
 */
export function schemaComment(schema: unknown, indent: string): string {
  if (!isSchemaObject(schema)) return '';
  const lines: string[] = [];
  const description = descriptionOf(schema);
  if (description !== undefined) lines.push(description);
  const own = hints(schema);
  if (own.length > 0) lines.push(own.join(', '));
  if (isSchemaObject(schema.items)) {
    // `string[]` has nowhere to put a comment, so the items' instructions move up to the array.
    const parts: string[] = [];
    const itemDescription = descriptionOf(schema.items);
    if (itemDescription !== undefined) parts.push(itemDescription);
    const itemHints = hints(schema.items);
    if (itemHints.length > 0) parts.push(itemHints.join(', '));
    if (parts.length > 0) lines.push(`Each item: ${parts.join('; ')}`);
  }
  if (schema.deprecated === true) lines.push('@deprecated');
  return documentationComment(lines, indent);
}

function renderObject(schema: SchemaObject, indent: string): TypeExpression {
  const properties = isSchemaObject(schema.properties) ? schema.properties : {};
  const required = new Set<unknown>(Array.isArray(schema.required) ? schema.required : []);
  const inner = `${indent}  `;
  const members: string[] = [];
  const propertyTypes: TypeExpression[] = [];
  for (const [name, propertySchema] of Object.entries(properties)) {
    const type = render(propertySchema, inner);
    propertyTypes.push(type);
    const optional = required.has(name) ? '' : '?';
    members.push(
      `${schemaComment(propertySchema, inner)}${inner}${propertyKey(name)}${optional}: ${type.text};`,
    );
  }
  const indexTypes: TypeExpression[] = [];
  let indexComment = '';
  if (isSchemaObject(schema.patternProperties)) {
    for (const patternSchema of Object.values(schema.patternProperties)) {
      indexTypes.push(render(patternSchema, inner));
    }
  }
  const additional = schema.additionalProperties;
  if (additional === true) indexTypes.push(unknownType);
  else if (isSchemaObject(additional)) {
    indexTypes.push(render(additional, inner));
    indexComment = schemaComment(additional, inner);
  }
  if (members.length === 0) {
    if (indexTypes.length === 0)
      return single(additional === false ? 'Record<string, never>' : anyObjectText);
    return single(`Record<string, ${union(indexTypes).text}>`);
  }
  if (indexTypes.length > 0) {
    // TypeScript requires every named property to fit the index signature, so the named
    // properties' types join it; the named members above still say exactly what each one is.
    const indexType = union([...indexTypes, ...propertyTypes]);
    members.push(`${indexComment}${inner}[key: string]: ${indexType.text};`);
  }
  return single(`{\n${members.join('\n')}\n${indent}}`);
}

function renderTuple(
  schema: SchemaObject,
  elements: readonly unknown[],
  rest: unknown,
  indent: string,
): TypeExpression {
  // Only an explicit `minItems` makes trailing elements optional: typebox always sets it, and a
  // hand-written tuple without it almost always means every element is expected.
  const minimum = typeof schema.minItems === 'number' ? schema.minItems : elements.length;
  const parts: string[] = [];
  for (let position = 0; position < elements.length; position += 1) {
    const element = render(elements[position], indent);
    if (position < minimum) parts.push(element.text);
    else parts.push(element.operator === undefined ? `${element.text}?` : `(${element.text})?`);
  }
  if (rest === true || isSchemaObject(rest)) parts.push(`...${arrayOf(render(rest, indent)).text}`);
  return single(`[${parts.join(', ')}]`);
}

function renderArray(schema: SchemaObject, indent: string): TypeExpression {
  // Draft 2020-12 spells a tuple `prefixItems` (+ `items` for the rest); earlier drafts and
  // typebox spell it `items: [...]` (+ `additionalItems`).
  if (Array.isArray(schema.prefixItems)) return renderTuple(schema, schema.prefixItems, schema.items, indent);
  if (Array.isArray(schema.items)) return renderTuple(schema, schema.items, schema.additionalItems, indent);
  if (schema.items === undefined) return single('unknown[]');
  return arrayOf(render(schema.items, indent));
}

function renderType(schema: SchemaObject, type: unknown, indent: string): TypeExpression {
  switch (type) {
    case 'string':
      return single('string');
    case 'number':
    case 'integer':
      return single('number');
    case 'boolean':
      return single('boolean');
    case 'null':
      return nullType;
    case 'array':
      return renderArray(schema, indent);
    case 'object':
      return renderObject(schema, indent);
    default:
      return unknownType;
  }
}

/** What `type` (or, without it, the object or array keywords) says, before any combinator. */
function renderBase(schema: SchemaObject, indent: string): TypeExpression | undefined {
  if (Array.isArray(schema.type)) {
    const alternatives: TypeExpression[] = [];
    for (const type of schema.type) alternatives.push(renderType(schema, type, indent));
    return union(alternatives);
  }
  if (schema.type !== undefined) return renderType(schema, schema.type, indent);
  const additional = schema.additionalProperties;
  if (
    isSchemaObject(schema.properties) ||
    isSchemaObject(schema.patternProperties) ||
    isSchemaObject(additional) ||
    typeof additional === 'boolean'
  ) {
    return renderObject(schema, indent);
  }
  if (schema.items !== undefined || schema.prefixItems !== undefined) return renderArray(schema, indent);
  return undefined;
}

function renderEach(schemas: readonly unknown[], indent: string): TypeExpression[] {
  const rendered: TypeExpression[] = [];
  for (const schema of schemas) rendered.push(render(schema, indent));
  return rendered;
}

function renderNonNullable(schema: SchemaObject, indent: string): TypeExpression {
  if (Object.hasOwn(schema, 'const')) return literal(schema.const);
  if (Array.isArray(schema.enum)) {
    const literals: TypeExpression[] = [];
    for (const value of schema.enum) literals.push(literal(value));
    return union(literals);
  }
  // Every keyword present constrains the same value, so the parts intersect: a base type with
  // `anyOf` alternatives is `Base & (A | B)`, and parts that say nothing (`unknown`) drop out.
  const parts: TypeExpression[] = [];
  const base = renderBase(schema, indent);
  if (base !== undefined) parts.push(base);
  if (Array.isArray(schema.anyOf)) parts.push(union(renderEach(schema.anyOf, indent)));
  if (Array.isArray(schema.oneOf)) parts.push(union(renderEach(schema.oneOf, indent)));
  if (Array.isArray(schema.allOf)) parts.push(intersection(renderEach(schema.allOf, indent)));
  return intersection(parts);
}

function render(schema: unknown, indent: string): TypeExpression {
  // Boolean schemas: `true` accepts anything, `false` nothing.
  if (schema === true) return unknownType;
  if (schema === false) return neverType;
  if (!isSchemaObject(schema)) return unknownType;
  const rendered = renderNonNullable(schema, indent);
  // OpenAPI's `nullable: true`; `type: [x, 'null']` is handled as an ordinary union.
  return schema.nullable === true ? union([rendered, nullType]) : rendered;
}

/**
 * Renders a JSON Schema as a TypeScript type expression, as the model reads it in the tool
 * declarations. Supports `type` (one or a list), `const`, `enum`, `anyOf`/`oneOf` (unions),
 * `allOf` (intersections), objects with required and optional properties, index signatures from
 * `additionalProperties` and `patternProperties`, arrays, tuples and `nullable`. Every property
 * with a description or constraints gets a doc comment, at any depth. Anything it cannot express
 * (`$ref`, `not`, an empty schema) becomes `unknown`, which is never wrong, only less precise.
 *
 * The output depends only on the schema, and objects span several lines: members at `indent`
 * plus two spaces, the closing brace at `indent` (the indentation of the line the type starts on).
 *
 * @example
 * ```ts
 * schemaToTypeScript({
 *   type: 'object',
 *   required: ['query'],
 *   properties: { query: { type: 'string', description: 'What to look for.' }, limit: { type: 'integer' } },
 * });
 * // '{\n  /** What to look for. *\/\n  query: string;\n  /** integer *\/\n  limit?: number;\n}'
 * ```
 */
export function schemaToTypeScript(schema: JsonSchema, indent = ''): string {
  return render(schema, indent).text;
}
