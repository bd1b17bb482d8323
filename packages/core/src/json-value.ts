import type { JsonValue } from './json.js';

/**
 * Converts `value` to the JSON value `JSON.stringify` would produce, or returns a description of
 * the first part that is not JSON (a function, a symbol, a BigInt, a cycle, a non-finite number).
 * `JSON.stringify` alone drops functions silently and throws on BigInt; tools deserve a clear answer.
 */
export function toJsonValue(
  value: unknown,
): { ok: true; value: JsonValue | undefined } | { ok: false; problem: string } {
  const ancestors = new Set<object>();

  function visit(current: unknown, path: string): JsonValue | undefined {
    if (
      current !== null &&
      typeof current === 'object' &&
      typeof (current as { toJSON?: unknown }).toJSON === 'function'
    ) {
      current = (current as { toJSON: () => unknown }).toJSON();
    }
    switch (typeof current) {
      case 'string':
      case 'boolean':
        return current;
      case 'number':
        if (!Number.isFinite(current)) throw new Error(`${path} is ${current}, which JSON cannot represent`);
        return current;
      case 'undefined':
        return undefined;
      case 'bigint':
        throw new Error(`${path} is a BigInt; convert it to a string or number`);
      case 'function':
        throw new Error(`${path} is a function`);
      case 'symbol':
        throw new Error(`${path} is a symbol`);
    }
    if (current === null) return null;
    const object = current as object;
    if (ancestors.has(object)) throw new Error(`${path} refers back to one of its own parents (a cycle)`);
    ancestors.add(object);
    try {
      if (Array.isArray(object)) {
        return object.map((item, index) => visit(item, `${path}[${index}]`) ?? null);
      }
      const result: { [key: string]: JsonValue } = {};
      for (const [key, item] of Object.entries(object)) {
        const converted = visit(item, `${path}.${key}`);
        if (converted !== undefined) result[key] = converted;
      }
      return result;
    } finally {
      ancestors.delete(object);
    }
  }

  try {
    return { ok: true, value: visit(value, 'the result') };
  } catch (error) {
    return { ok: false, problem: (error as Error).message };
  }
}
