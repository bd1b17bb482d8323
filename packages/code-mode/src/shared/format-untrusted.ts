/** How many characters of an untrusted string an error message quotes. */
const quotedCharacters = 40;

/** How many keys of an untrusted object an error message names. */
const namedKeys = 5;

function quote(text: string): string {
  if (text.length <= quotedCharacters) return JSON.stringify(text);
  return `${JSON.stringify(text.slice(0, quotedCharacters))}… (${text.length} characters)`;
}

/**
 * A short description of a value that came from an engine host, for error messages: its kind and
 * a bounded excerpt, never the whole value. It never serialises the value, so neither a huge string
 * nor an object nested a million levels deep can make an error message large or make it throw.
 */
export function formatUntrusted(value: unknown): string {
  if (typeof value === 'string') return `the string ${quote(value)}`;
  if (Array.isArray(value)) return `an array of ${value.length} items`;
  if (value === null) return 'null';
  if (typeof value === 'object') {
    const keys = Object.keys(value);
    if (keys.length === 0) return 'an empty object';
    const named = keys.slice(0, namedKeys).map(quote).join(', ');
    return `an object with the keys ${named}${keys.length > namedKeys ? ` and ${keys.length - namedKeys} more` : ''}`;
  }
  if (value === undefined) return 'nothing';
  return String(value).slice(0, quotedCharacters);
}
