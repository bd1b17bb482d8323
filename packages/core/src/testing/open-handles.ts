/**
 * Counts the timers, sockets and processes this Node process has open, by kind. Compare two
 * counts with {@link newOpenHandles} to prove a piece of work left nothing running.
 *
 * @example
 * ```ts
 * const before = countOpenHandles();
 * await agent.ask('hello');
 * expect(newOpenHandles(before)).toEqual([]);
 * ```
 */
export function countOpenHandles(): Map<string, number> {
  const counts = new Map<string, number>();
  for (const kind of process.getActiveResourcesInfo()) counts.set(kind, (counts.get(kind) ?? 0) + 1);
  return counts;
}

/**
 * The kinds of handle open now that were not open at `before` (one entry per extra handle).
 * Waits one turn of the event loop first, so handles closed by pending callbacks are not counted.
 */
export async function newOpenHandles(before: Map<string, number>): Promise<string[]> {
  await new Promise((resolve) => setImmediate(resolve));
  const extra: string[] = [];
  for (const [kind, count] of countOpenHandles()) {
    for (let index = before.get(kind) ?? 0; index < count; index += 1) extra.push(kind);
  }
  return extra;
}
