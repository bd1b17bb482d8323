/**
 * Whether `value`, a parsed JSON value, nests more than `limit` levels of arrays and objects (a
 * scalar nests 0, `[]` 1, `[[1]]` 2). Walks with an explicit stack, so a value nested a million
 * levels deep is measured without recursion and stops the walk as soon as it is too deep.
 */
export function exceedsJsonDepth(value: unknown, limit: number): boolean {
  const pending: { readonly value: unknown; readonly depth: number }[] = [{ value, depth: 0 }];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const current = next.value;
    if (typeof current !== 'object' || current === null) continue;
    const depth = next.depth + 1;
    if (depth > limit) return true;
    const children = Array.isArray(current) ? current : Object.values(current);
    for (const child of children) {
      if (typeof child === 'object' && child !== null) pending.push({ value: child, depth });
    }
  }
  return false;
}
