/**
 * Values remembered for `ttlMs` by key, the most recent `max` of them: for what rater pages read again and again and
 * may see a few seconds late (issue 12).
 */
export function createTtlMemo<V>(options: { ttlMs: number; max: number; now?: () => number }): (key: string, compute: () => V) => V {
  const now = options.now ?? Date.now;
  const entries = new Map<string, { value: V; until: number }>();
  return (key, compute) => {
    const at = now();
    const hit = entries.get(key);
    if (hit && hit.until > at) return hit.value;
    const value = compute();
    // Most recently computed last: eviction takes the first key.
    entries.delete(key);
    entries.set(key, { value, until: at + options.ttlMs });
    if (entries.size > options.max) entries.delete(entries.keys().next().value as string);
    return value;
  };
}
