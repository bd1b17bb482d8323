/** A string in a profile, written as an SBPL string literal. */
interface SbplString {
  readonly string: string;
}

/** An SBPL expression: a symbol or a number (written as is), a string literal, or a list. */
export type SbplExpression = string | number | SbplString | readonly SbplExpression[];

/** One filter of a rule, on its own line, with a comment after it that says why it is there. */
export interface SbplFilter {
  readonly expression: SbplExpression;
  readonly comment?: string;
}

/**
 * One top-level form: `head` opens it (`['allow', 'file-read*']`, `['version', 1]`) and each
 * filter follows, one a line when there are several or any has a comment.
 */
interface SbplForm {
  readonly head: readonly SbplExpression[];
  readonly filters?: readonly SbplFilter[];
}

/** A group of forms with the comment lines that explain them. */
export interface SbplSection {
  readonly comment: readonly string[];
  readonly forms: readonly SbplForm[];
}

/** Lines longer than this are broken, one list item a line, where the text allows. */
const lineWidth = 100;

/**
 * Writes a profile: the header comment, then each section's comment and forms, a blank line
 * between sections. Strings are only ever written by {@link sbplString}, comments only by
 * {@link sbplComment}, so no text given to it can end a string or a comment early.
 */
export function renderSbpl(header: readonly string[], sections: readonly SbplSection[]): string {
  const blocks = [header.map(sbplComment).join('\n')];
  for (const section of sections) {
    const lines = section.comment.map(sbplComment);
    for (const form of section.forms) lines.push(renderForm(form));
    blocks.push(lines.join('\n'));
  }
  return `${blocks.join('\n\n')}\n`;
}

/**
 * A form on one line when it fits and no filter has a comment; otherwise its head on the first
 * line and each filter on its own line below, its comment after it.
 */
function renderForm(form: SbplForm): string {
  const head = form.head.map(renderInline).join(' ');
  const filters = form.filters ?? [];
  if (filters.length === 0) return `(${head})`;
  const oneLine = `(${head} ${filters.map((filter) => renderInline(filter.expression)).join(' ')})`;
  if (filters.every((filter) => filter.comment === undefined) && oneLine.length <= lineWidth) return oneLine;
  const lines = filters.map((filter, index) => {
    // The closing parenthesis goes before the comment: after it, the comment would swallow it.
    const close = index === filters.length - 1 ? ')' : '';
    const comment = filter.comment === undefined ? '' : ` ${sbplComment(filter.comment)}`;
    return `${renderBroken(filter.expression, '  ')}${close}${comment}`;
  });
  return `(${head}\n${lines.join('\n')}`;
}

/** `expression` indented by `indent`, its items one a line below its head when it is too long. */
function renderBroken(expression: SbplExpression, indent: string): string {
  const inline = renderInline(expression);
  if (indent.length + inline.length <= lineWidth || !Array.isArray(expression) || expression.length < 2) {
    return `${indent}${inline}`;
  }
  const [head, ...items] = expression as readonly SbplExpression[];
  const inner = `${indent}  `;
  return `${indent}(${renderInline(head as SbplExpression)}\n${items.map((item) => renderBroken(item, inner)).join('\n')})`;
}

function renderInline(expression: SbplExpression): string {
  if (typeof expression === 'string') return expression;
  if (typeof expression === 'number') return String(expression);
  if (isSbplString(expression)) return sbplString(expression.string);
  return `(${expression.map(renderInline).join(' ')})`;
}

function isSbplString(expression: SbplExpression): expression is SbplString {
  return typeof expression === 'object' && !Array.isArray(expression);
}

/**
 * True when `text` can be written as an SBPL string literal that every reader of the profile
 * language takes the same way: printable ASCII only, so only `"` and `\` need escaping. Other
 * text (control characters, non-ASCII) goes into a profile through a parameter instead.
 */
export function isPlainAscii(text: string): boolean {
  return /^[\x20-\x7e]*$/.test(text);
}

/**
 * `text` as an SBPL string literal: in double quotes, with `\` and `"` escaped by a backslash.
 * Parentheses, `;` and `#` need no escape inside a string.
 *
 * @throws Error for text that is not plain printable ASCII: callers pass such text as a parameter.
 */
function sbplString(text: string): string {
  if (!isPlainAscii(text)) {
    throw new Error(
      `Only printable ASCII is written into a profile as a string literal, got ${JSON.stringify(text)}.`,
    );
  }
  return `"${text.replace(/[\\"]/g, (character) => `\\${character}`)}"`;
}

/**
 * `text` as one comment line. A comment runs to the end of its line, so a line break inside it
 * would let the rest be read as rules; like string literals, comments hold printable ASCII only,
 * so the whole profile is printable ASCII and line breaks. Callers escape anything else first
 * ({@link asciiJson}).
 *
 * @throws Error for text that is not plain printable ASCII.
 */
function sbplComment(text: string): string {
  if (!isPlainAscii(text))
    throw new Error(`A profile comment holds printable ASCII only, got ${JSON.stringify(text)}.`);
  return text === '' ? ';' : `; ${text}`;
}

/** `text` as a JSON string in printable ASCII: control and non-ASCII characters as `\uXXXX`. */
export function asciiJson(text: string): string {
  return JSON.stringify(text).replace(
    /[^\x20-\x7e]/g,
    (character) => `\\u${character.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}
