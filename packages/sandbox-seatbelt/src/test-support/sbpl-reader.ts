/**
 * A small reader for the profiles this package writes, independent of the writer: it parses SBPL
 * text into S-expressions the way a Scheme reader does (lists, string literals with `\\` and `\"`
 * escapes, symbols, numbers, `;` comments), then checks that every form is one the generator
 * emits, with arguments of the right kind. It is strict on purpose: anything the generator never
 * writes (another escape, a raw control character, a `#"regex"`, an unknown operation or filter,
 * a path filter on a non-canonical path, a parameter nobody defines) is an error.
 */

export type SExpression =
  | { readonly kind: 'list'; readonly items: readonly SExpression[] }
  | { readonly kind: 'string'; readonly value: string }
  | { readonly kind: 'symbol'; readonly name: string }
  | { readonly kind: 'number'; readonly value: number };

/** A path filter once its parameter, if any, is looked up. */
export interface PathFilter {
  readonly kind: 'literal' | 'subpath';
  readonly path: string;
  /** The parameter it came from, when it was not written as a string literal. */
  readonly parameter?: string;
}

/** One `(allow ...)` form: its operations and its filters, as read. */
export interface ReadRule {
  readonly operations: readonly string[];
  readonly filters: readonly SExpression[];
}

export class SbplSyntaxError extends Error {}

/** Parses profile text into its top-level forms. */
export function readSbpl(text: string): SExpression[] {
  let position = 0;
  const forms: SExpression[] = [];
  const fail = (message: string): never => {
    throw new SbplSyntaxError(`${message} at offset ${position}`);
  };
  const skipBlank = () => {
    while (position < text.length) {
      const character = text[position] as string;
      if (character === ';') {
        while (position < text.length && text[position] !== '\n') position += 1;
      } else if (character === ' ' || character === '\n' || character === '\t') {
        position += 1;
      } else {
        return;
      }
    }
  };
  const readString = (): SExpression => {
    position += 1;
    let value = '';
    for (;;) {
      if (position >= text.length) fail('unterminated string');
      const character = text[position] as string;
      position += 1;
      if (character === '"') return { kind: 'string', value };
      if (character === '\\') {
        const escaped = text[position];
        if (escaped !== '\\' && escaped !== '"') fail(`escape \\${escaped ?? ''} the writer never emits`);
        value += escaped;
        position += 1;
      } else if (character < ' ' || character > '~') {
        fail(`raw character U+${character.charCodeAt(0).toString(16)} inside a string`);
      } else {
        value += character;
      }
    }
  };
  const readExpression = (): SExpression => {
    skipBlank();
    if (position >= text.length) fail('unexpected end of profile');
    const character = text[position] as string;
    if (character === '(') {
      position += 1;
      const items: SExpression[] = [];
      for (;;) {
        skipBlank();
        if (position >= text.length) fail('unbalanced parenthesis');
        if (text[position] === ')') {
          position += 1;
          return { kind: 'list', items };
        }
        items.push(readExpression());
      }
    }
    if (character === ')') fail('unexpected )');
    if (character === '"') return readString();
    if (character === '#') fail('a # form the writer never emits');
    const start = position;
    while (position < text.length && !/[\s()";]/.test(text[position] as string)) position += 1;
    const atom = text.slice(start, position);
    if (/^[\x21-\x7e]+$/.test(atom) === false) fail(`atom ${JSON.stringify(atom)} is not printable ASCII`);
    return /^-?\d+$/.test(atom) ? { kind: 'number', value: Number(atom) } : { kind: 'symbol', name: atom };
  };
  for (;;) {
    skipBlank();
    if (position >= text.length) return forms;
    forms.push(readExpression());
  }
}

const operations = new Set([
  'file-read*',
  'file-read-metadata',
  'file-map-executable',
  'file-write*',
  'file-write-data',
  'file-ioctl',
  'process-exec',
  'process-fork',
  'signal',
  'process-info*',
  'sysctl-read',
  'network-outbound',
  'network-inbound',
  'network-bind',
  'system-socket',
  'mach-lookup',
]);

export class SbplShapeError extends Error {}

/**
 * Checks the forms a profile was read into: `(version 1)` first, one `(deny default)`, and
 * otherwise only `(allow operation... filter...)` with known operations and well-formed filters.
 * Returns the allow rules, for tests to ask what the profile grants.
 */
export function checkProfileShape(
  forms: readonly SExpression[],
  parameters: Readonly<Record<string, string>>,
): ReadRule[] {
  const fail = (message: string, expression?: SExpression): never => {
    throw new SbplShapeError(
      expression === undefined ? message : `${message}: ${writeSExpression(expression)}`,
    );
  };
  const [version, ...rest] = forms;
  if (version === undefined || writeSExpression(version) !== '(version 1)')
    fail('the profile must open with (version 1)');
  const rules: ReadRule[] = [];
  let denyDefaults = 0;
  for (const form of rest) {
    if (form.kind !== 'list') fail('a top-level form must be a list', form);
    const items = (form as Extract<SExpression, { kind: 'list' }>).items;
    const head = items[0];
    if (writeSExpression(form) === '(deny default)') {
      denyDefaults += 1;
      continue;
    }
    if (head?.kind !== 'symbol' || head.name !== 'allow')
      fail('only (allow ...) and (deny default) are emitted', form);
    const ruleOperations: string[] = [];
    let index = 1;
    while (index < items.length && items[index]?.kind === 'symbol') {
      const name = (items[index] as { name: string }).name;
      if (!operations.has(name)) fail(`unknown operation ${name}`, form);
      ruleOperations.push(name);
      index += 1;
    }
    if (ruleOperations.length === 0) fail('an allow form names at least one operation', form);
    const filters = items.slice(index);
    // Without filters a rule allows everywhere: only fork is granted that way.
    if (filters.length === 0 && ruleOperations.join(' ') !== 'process-fork')
      fail('an allow form without filters', form);
    for (const filter of filters) checkFilter(filter, parameters, fail);
    rules.push({ operations: ruleOperations, filters });
  }
  if (denyDefaults !== 1) fail(`the profile must hold (deny default) once, found ${denyDefaults}`);
  return rules;
}

function checkFilter(
  filter: SExpression,
  parameters: Readonly<Record<string, string>>,
  fail: (message: string, expression?: SExpression) => never,
): void {
  if (filter.kind !== 'list') fail('a filter must be a list', filter);
  const [head, ...args] = (filter as Extract<SExpression, { kind: 'list' }>).items;
  const name = head?.kind === 'symbol' ? head.name : fail('a filter starts with its name', filter);
  const one = (): SExpression =>
    args.length === 1 ? (args[0] as SExpression) : fail('expected one argument', filter);
  const isSymbolIn = (value: SExpression, allowed: readonly string[]) =>
    value.kind === 'symbol' && allowed.includes(value.name);
  switch (name) {
    case 'literal':
    case 'subpath': {
      const path = pathValue(one(), parameters, fail);
      if (!isCanonical(path)) fail(`path ${JSON.stringify(path)} is not canonical`, filter);
      return;
    }
    case 'require-all':
    case 'require-any':
      if (args.length < 2) fail('a combination needs two filters or more', filter);
      for (const arg of args) checkFilter(arg, parameters, fail);
      return;
    case 'require-not':
      checkFilter(one(), parameters, fail);
      return;
    case 'vnode-type':
      if (!isSymbolIn(one(), ['CHARACTER-DEVICE'])) fail('unexpected vnode type', filter);
      return;
    case 'target':
      if (!isSymbolIn(one(), ['self', 'same-sandbox'])) fail('unexpected target', filter);
      return;
    case 'remote':
    case 'local':
      if (!isSymbolIn(one(), ['tcp', 'udp'])) fail('unexpected address family', filter);
      return;
    case 'socket-domain':
      if (!isSymbolIn(one(), ['AF_ROUTE', 'AF_SYSTEM'])) fail('unexpected socket domain', filter);
      return;
    case 'socket-protocol':
      if (one().kind !== 'number') fail('a socket protocol is a number', filter);
      return;
    case 'sysctl-name':
    case 'sysctl-name-prefix':
    case 'global-name':
    case 'control-name':
      if (one().kind !== 'string') fail('expected a string', filter);
      return;
    default:
      fail(`unknown filter ${name}`, filter);
  }
}

/** The path a `literal` or `subpath` names: a string literal, or `(param "NAME")` looked up. */
function pathValue(
  value: SExpression,
  parameters: Readonly<Record<string, string>>,
  fail: (message: string, expression?: SExpression) => never,
): string {
  if (value.kind === 'string') return value.value;
  if (value.kind === 'list' && value.items.length === 2) {
    const [head, name] = value.items;
    if (head?.kind === 'symbol' && head.name === 'param' && name?.kind === 'string') {
      const path = parameters[name.value];
      return path ?? fail(`parameter ${name.value} is not defined`, value);
    }
  }
  return fail('a path is a string or (param "NAME")', value);
}

/** Absolute, and without the `//`, `/./`, `/../` or trailing `/` that make a filter match nothing. */
function isCanonical(path: string): boolean {
  if (!path.startsWith('/')) return false;
  if (path === '/') return true;
  return (
    !path.endsWith('/') &&
    path
      .slice(1)
      .split('/')
      .every((part) => part !== '' && part !== '.' && part !== '..')
  );
}

/** The paths the rules grant `operation` on (directly or through a wildcard such as `file-read*`). */
export function pathFiltersFor(
  rules: readonly ReadRule[],
  operation: string,
  parameters: Readonly<Record<string, string>>,
): PathFilter[] {
  const found: PathFilter[] = [];
  for (const rule of rules) {
    const applies = rule.operations.some(
      (granted) =>
        granted === operation || (granted.endsWith('*') && operation.startsWith(granted.slice(0, -1))),
    );
    if (!applies) continue;
    for (const filter of rule.filters) {
      if (filter.kind !== 'list') continue;
      const [head, value] = filter.items;
      if (
        head?.kind !== 'symbol' ||
        (head.name !== 'literal' && head.name !== 'subpath') ||
        value === undefined
      )
        continue;
      const parameter =
        value.kind === 'list' && value.items[1]?.kind === 'string'
          ? (value.items[1] as { value: string }).value
          : undefined;
      const path = value.kind === 'string' ? value.value : (parameters[parameter ?? ''] as string);
      found.push({ kind: head.name, path, ...(parameter === undefined ? {} : { parameter }) });
    }
  }
  return found;
}

/** The rules that name `operation` exactly. */
export function rulesFor(rules: readonly ReadRule[], operation: string): ReadRule[] {
  return rules.filter((rule) => rule.operations.includes(operation));
}

/** An S-expression written back on one line, strings JSON-quoted: for messages and assertions. */
export function writeSExpression(expression: SExpression): string {
  switch (expression.kind) {
    case 'list':
      return `(${expression.items.map(writeSExpression).join(' ')})`;
    case 'string':
      return JSON.stringify(expression.value);
    case 'symbol':
      return expression.name;
    case 'number':
      return String(expression.value);
  }
}
