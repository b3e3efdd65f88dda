/**
 * Runs `work` on every item, at most `limit` at a time, and answers the results in the items' order once all have
 * ended: one slow item holds only its own place. When some failed, the first failure is thrown after all ended (the
 * others' work is done, not abandoned half-way).
 */
export async function eachWithin<T, R>(items: readonly T[], limit: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array<R>(items.length);
  const failures: unknown[] = [];
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const index = next++;
      try {
        results[index] = await work(items[index]!);
      } catch (error) {
        failures.push(error);
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  if (failures.length > 0) throw failures[0];
  return results;
}
