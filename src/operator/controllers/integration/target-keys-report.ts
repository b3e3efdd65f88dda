import { CARRIED_KEYS_MAX, type CarriedFolder, type KeyReader, type TargetKeys } from '../../../integrations/target-keys.ts';
import type { KeyOrigin } from './source-merge.ts';

/**
 * What a sync tells Coffer of its target's keys (names only): where each came from, grouped by folder, at most
 * CARRIED_KEYS_MAX in a fixed order (so an unchanged target reports the same and nothing is stored again); how many
 * its template made; and the workloads that read it (undefined: the operator does not watch workloads).
 */
export function targetKeysReport(
  data: Readonly<Record<string, string>>,
  origins: ReadonlyMap<string, KeyOrigin>,
  readers: { readers: KeyReader[]; truncated: boolean } | undefined,
): TargetKeys {
  // by folder, then name in the folder, then name in the target (NUL is in none of them)
  const byOrder = new Map([...origins].map(([name, origin]) => [[origin.environment, origin.path, origin.key, name].join('\u0000'), { name, origin }]));
  const attributed = [...byOrder.keys()].sort().map((order) => byOrder.get(order)!);
  const carried: CarriedFolder[] = [];
  for (const { name, origin } of attributed.slice(0, CARRIED_KEYS_MAX)) {
    const last = carried.at(-1);
    const folder = last?.environment === origin.environment && last.path === origin.path ? last : { environment: origin.environment, path: origin.path, keys: [] };
    if (folder !== last) carried.push(folder);
    folder.keys.push(name === origin.key ? { key: origin.key } : { key: origin.key, as: name });
  }
  return {
    carried,
    templated: Object.keys(data).length - origins.size,
    carriedTruncated: attributed.length > CARRIED_KEYS_MAX,
    readers: readers?.readers ?? null,
    readersTruncated: readers?.truncated ?? false,
  };
}
