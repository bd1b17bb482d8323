/** Python's keywords and soft keywords (3.14), which a tool's Python name must not be. */
const pythonKeywords = new Set([
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
  '_',
  'case',
  'match',
  'type',
]);

/**
 * The attribute a Python program calls a tool by, `tools.<name>`: the tool's catalog identifier,
 * with `$` (valid in JavaScript, not in Python) as `_`, and a trailing `_` after a Python keyword
 * (`tools.import_`), as PEP 8 suggests. The host's prelude (host/guest_prelude.py) names them the
 * same way; `tools.call(name)` reaches every tool by its own name too.
 */
export function pythonToolName(identifier: string): string {
  const name = identifier.replaceAll('$', '_');
  return pythonKeywords.has(name) ? `${name}_` : name;
}
