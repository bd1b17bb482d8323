/** How deep a value may nest before canonical JSON refuses it. */
const maxDepth = 512;

/**
 * JSON text with every object's keys in sorted order, so equal values always give equal text (a
 * store compares and hashes the text). Throws an `Error` naming the path of a part that is not
 * JSON (a function, a symbol, a BigInt, a non-finite number, a cycle) or nests deeper than 512.
 * `undefined` object fields are left out, as `JSON.stringify` does.
 */
export function canonicalJson(value: unknown): string {
  const ancestors = new Set<object>();

  function write(current: unknown, path: string, depth: number): string {
    switch (typeof current) {
      case 'string':
        return JSON.stringify(current);
      case 'boolean':
        return current ? 'true' : 'false';
      case 'number':
        if (!Number.isFinite(current)) throw new Error(`${path} is ${current}, which JSON cannot represent`);
        return JSON.stringify(current);
      case 'object':
        break;
      default:
        throw new Error(`${path} is a ${typeof current}, which JSON cannot represent`);
    }
    if (current === null) return 'null';
    if (depth >= maxDepth) throw new Error(`${path} nests deeper than ${maxDepth} levels`);
    if (ancestors.has(current)) throw new Error(`${path} refers back to one of its own parents (a cycle)`);
    if (ArrayBuffer.isView(current)) throw new Error(`${path} holds bytes, which JSON cannot represent`);
    ancestors.add(current);
    try {
      if (Array.isArray(current)) {
        const items = current.map((item, index) =>
          item === undefined ? 'null' : write(item, `${path}[${index}]`, depth + 1),
        );
        return `[${items.join(',')}]`;
      }
      const fields: string[] = [];
      for (const key of Object.keys(current).sort()) {
        const item = (current as Record<string, unknown>)[key];
        if (item === undefined) continue;
        fields.push(`${JSON.stringify(key)}:${write(item, `${path}.${key}`, depth + 1)}`);
      }
      return `{${fields.join(',')}}`;
    } finally {
      ancestors.delete(current);
    }
  }

  return write(value, 'the value', 0);
}
