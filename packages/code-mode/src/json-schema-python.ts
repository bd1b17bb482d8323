import type { JsonSchema } from '@ghost/core/provider';
import { constraintHints, descriptionOf, isSchemaObject, type SchemaObject } from './json-schema-reading.js';

/**
 * Python's hard keywords (`keyword.kwlist` of CPython 3.13): a name among them cannot be an
 * attribute, a parameter or a class field written plainly. Soft keywords (`match`, `case`,
 * `type`, `_`) can.
 */
export const pythonKeywords: ReadonlySet<string> = new Set([
  'False',
  'None',
  'True',
  'and',
  'as',
  'assert',
  'async',
  'await',
  'break',
  'class',
  'continue',
  'def',
  'del',
  'elif',
  'else',
  'except',
  'finally',
  'for',
  'from',
  'global',
  'if',
  'import',
  'in',
  'is',
  'lambda',
  'nonlocal',
  'not',
  'or',
  'pass',
  'raise',
  'return',
  'try',
  'while',
  'with',
  'yield',
]);

const pythonIdentifierPattern = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Whether `name` can be written plainly as a Python attribute, parameter or field. */
export function isPlainPythonName(name: string): boolean {
  return pythonIdentifierPattern.test(name) && !pythonKeywords.has(name);
}

/**
 * The `TypedDict` classes one set of declarations defines, in the order they must appear (a
 * class before any class that uses it), with the names already taken so no two collide.
 */
export class PythonClasses {
  readonly #definitions: string[] = [];
  readonly #taken: Set<string>;

  /** `taken`: names the declarations use for something else (`tools`, `ToolError`, ...). */
  constructor(taken: Iterable<string>) {
    this.#taken = new Set(taken);
  }

  /** A class name like `hint` that is not yet taken, reserved from now on. */
  claim(hint: string): string {
    let name = hint;
    for (let suffix = 2; this.#taken.has(name); suffix += 1) name = `${hint}${suffix}`;
    this.#taken.add(name);
    return name;
  }

  add(definition: string): void {
    this.#definitions.push(definition);
  }

  /** Every class, separated by blank lines. */
  get text(): string {
    return this.#definitions.join('\n\n');
  }
}

/** `lookup_order` → `LookupOrder`: a class name from an identifier or a property name. */
export function pascalCase(name: string): string {
  const words = name.split(/[^A-Za-z0-9]+/).filter((word) => word !== '');
  const joined = words.map((word) => word[0]!.toUpperCase() + word.slice(1)).join('');
  if (joined === '') return 'Value';
  return /^[0-9]/.test(joined) ? `T${joined}` : joined;
}

/**
 * A Python string literal for `text` in a docstring: backslashes doubled and `"""` broken up, so
 * no description can end the docstring early or change what follows it.
 */
function docstringText(text: string): string {
  let safe = text.replaceAll('\\', '\\\\').replaceAll('"""', '\\"\\"\\"');
  if (safe.endsWith('"')) safe = `${safe.slice(0, -1)}\\"`;
  return safe;
}

/** A docstring of `lines` at `indent`, one line when there is one; empty when there are none. */
export function docstring(lines: readonly string[], indent: string): string {
  const parts = lines.flatMap((line) => line.split(/\r?\n/)).map((line) => docstringText(line.trimEnd()));
  while (parts.length > 0 && parts[parts.length - 1] === '') parts.pop();
  if (parts.length === 0) return '';
  const [first, ...rest] = parts;
  if (rest.length === 0) return `${indent}"""${first}"""\n`;
  const body = rest.map((line) => (line === '' ? '' : `${indent}${line}`)).join('\n');
  return `${indent}"""${first}\n${body}\n${indent}"""\n`;
}

/** What to tell the model about a property beyond its type: description, then constraints. */
export function pythonSchemaNotes(schema: unknown): string[] {
  if (!isSchemaObject(schema)) return [];
  const notes: string[] = [];
  const description = descriptionOf(schema);
  if (description !== undefined) notes.push(description);
  const hints = constraintHints(schema);
  if (hints.length > 0) notes.push(hints.join(', '));
  if (isSchemaObject(schema.items)) {
    const itemNotes = pythonSchemaNotes(schema.items);
    if (itemNotes.length > 0) notes.push(`Each item: ${itemNotes.join('; ')}`);
  }
  if (schema.deprecated === true) notes.push('Deprecated.');
  return notes;
}

function union(members: readonly string[]): string {
  const unique: string[] = [];
  for (const member of members) {
    if (member === 'Any') return 'Any';
    for (const part of member.split(' | ')) if (!unique.includes(part)) unique.push(part);
  }
  if (unique.length === 0) return 'Any';
  return unique.join(' | ');
}

function literal(value: unknown): string {
  if (value === null) return 'None';
  if (typeof value === 'boolean') return value ? 'True' : 'False';
  // JSON text is a valid Python literal for strings and numbers.
  if (typeof value === 'string' || typeof value === 'number') return JSON.stringify(value);
  return Array.isArray(value) ? 'list[Any]' : 'dict[str, Any]';
}

function literalType(values: readonly unknown[]): string {
  const simple: unknown[] = [];
  const others: string[] = [];
  for (const value of values) {
    if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean')
      simple.push(value);
    else others.push(literal(value));
  }
  const parts = simple.length > 0 ? [`Literal[${simple.map(literal).join(', ')}]`] : [];
  return union([...parts, ...others]);
}

/** An object schema with properties as a `TypedDict` class in `classes`; returns its name. */
function renderFields(schema: SchemaObject, hint: string, classes: PythonClasses): string {
  const properties = isSchemaObject(schema.properties) ? schema.properties : {};
  const required = new Set<unknown>(Array.isArray(schema.required) ? schema.required : []);
  const names = Object.keys(properties);
  const name = classes.claim(hint);
  const fields = names.map((property) => {
    const type = schemaToPython(properties[property], `${hint}${pascalCase(property)}`, classes);
    return { property, type: required.has(property) ? type : `NotRequired[${type}]` };
  });
  const notes = pythonSchemaNotes(schema);
  if (names.every(isPlainPythonName)) {
    const body = fields.map(({ property, type }) => {
      return `    ${property}: ${type}\n${docstring(pythonSchemaNotes(properties[property]), '    ')}`;
    });
    classes.add(`class ${name}(TypedDict):\n${docstring(notes, '    ')}${body.join('').trimEnd()}`);
  } else {
    // A key such as 'first-name' cannot be a class field: TypedDict's functional form takes any key.
    const comment = notes.length > 0 ? `# ${notes.join(' ').replaceAll('\n', ' ')}\n` : '';
    const entries = fields.map(({ property, type }) => `    ${JSON.stringify(property)}: ${type},`);
    classes.add(`${comment}${name} = TypedDict(${JSON.stringify(name)}, {\n${entries.join('\n')}\n})`);
  }
  return name;
}

function renderObject(schema: SchemaObject, hint: string, classes: PythonClasses): string {
  const properties = isSchemaObject(schema.properties) ? schema.properties : {};
  if (Object.keys(properties).length > 0) return renderFields(schema, hint, classes);
  // `patternProperties` (a record, as typebox writes it) and `additionalProperties` give the values.
  const values = isSchemaObject(schema.patternProperties) ? Object.values(schema.patternProperties) : [];
  if (isSchemaObject(schema.additionalProperties)) values.push(schema.additionalProperties);
  if (values.length === 0) return 'dict[str, Any]';
  return `dict[str, ${union(values.map((value) => schemaToPython(value, `${hint}Value`, classes)))}]`;
}

function renderArray(schema: SchemaObject, hint: string, classes: PythonClasses): string {
  // JSON arrays arrive as lists, tuples (`prefixItems`, `items: [...]`) included.
  const elements = Array.isArray(schema.prefixItems)
    ? schema.prefixItems
    : Array.isArray(schema.items)
      ? schema.items
      : undefined;
  if (elements !== undefined) {
    return `list[${union(elements.map((element) => schemaToPython(element, `${hint}Item`, classes)))}]`;
  }
  if (schema.items === undefined) return 'list[Any]';
  return `list[${schemaToPython(schema.items, `${hint}Item`, classes)}]`;
}

function renderType(schema: SchemaObject, type: unknown, hint: string, classes: PythonClasses): string {
  switch (type) {
    case 'string':
      return 'str';
    case 'integer':
      return 'int';
    case 'number':
      return 'float';
    case 'boolean':
      return 'bool';
    case 'null':
      return 'None';
    case 'array':
      return renderArray(schema, hint, classes);
    case 'object':
      return renderObject(schema, hint, classes);
    default:
      return 'Any';
  }
}

/** `allOf` of object schemas, merged into one: its properties and required names together. */
function mergeAll(schemas: readonly unknown[]): SchemaObject | undefined {
  const properties: Record<string, unknown> = {};
  const required: unknown[] = [];
  for (const schema of schemas) {
    if (!isSchemaObject(schema) || !isSchemaObject(schema.properties)) return undefined;
    Object.assign(properties, schema.properties);
    if (Array.isArray(schema.required)) required.push(...schema.required);
  }
  return { type: 'object', properties, required };
}

function renderAlternatives(schemas: readonly unknown[], hint: string, classes: PythonClasses): string {
  return union(schemas.map((schema, at) => schemaToPython(schema, `${hint}Option${at + 1}`, classes)));
}

function renderNonNullable(schema: SchemaObject, hint: string, classes: PythonClasses): string {
  if (Object.hasOwn(schema, 'const')) return literalType([schema.const]);
  if (Array.isArray(schema.enum)) return literalType(schema.enum);
  // Python's types cannot intersect: the alternatives say the most, then the merged `allOf`,
  // then `type`; the notes keep what the type leaves out.
  if (Array.isArray(schema.anyOf)) return renderAlternatives(schema.anyOf, hint, classes);
  if (Array.isArray(schema.oneOf)) return renderAlternatives(schema.oneOf, hint, classes);
  if (Array.isArray(schema.allOf)) {
    const merged = mergeAll(
      [schema, ...schema.allOf].filter((part) => isSchemaObject(part) && isSchemaObject(part.properties)),
    );
    return merged === undefined ? 'Any' : renderObject(merged, hint, classes);
  }
  if (Array.isArray(schema.type))
    return union(schema.type.map((type) => renderType(schema, type, hint, classes)));
  if (schema.type !== undefined) return renderType(schema, schema.type, hint, classes);
  if (
    isSchemaObject(schema.properties) ||
    isSchemaObject(schema.patternProperties) ||
    isSchemaObject(schema.additionalProperties)
  ) {
    return renderObject(schema, hint, classes);
  }
  if (schema.items !== undefined || schema.prefixItems !== undefined)
    return renderArray(schema, hint, classes);
  return 'Any';
}

/**
 * Renders a JSON Schema as a Python type expression, as the model reads it in the Python
 * declarations: `str`, `int`, `float`, `bool`, `None`, `list[...]`, `dict[str, ...]`,
 * `Literal[...]`, unions with `|`, and an object with properties as a `TypedDict` class named
 * from `hint` (added to `classes`; nested objects get the property's name after it). Anything
 * it cannot express (`$ref`, `not`, an empty schema) becomes `Any`, which is never wrong, only
 * less precise.
 *
 * @example
 * ```ts
 * const classes = new PythonClasses(['tools']);
 * schemaToPython({ type: 'object', required: ['id'], properties: { id: { type: 'string' } } }, 'Order', classes);
 * // 'Order', and classes.text is 'class Order(TypedDict):\n    id: str'
 * ```
 */
export function schemaToPython(schema: JsonSchema | unknown, hint: string, classes: PythonClasses): string {
  if (schema === true || !isSchemaObject(schema)) return 'Any';
  const rendered = renderNonNullable(schema, hint, classes);
  return schema.nullable === true ? union([rendered, 'None']) : rendered;
}
