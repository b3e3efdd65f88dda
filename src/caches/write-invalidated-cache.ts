import type { Executor } from '../db/database.ts';
import type { WriteWatch } from '../db/write-watch.ts';
import type { WriteInvalidatedPolicy } from './cache-policies.ts';

/**
 * A small in-process cache for what every request looks up (projects,
 * environments, folders, token rows, permissions). An entry lives until its
 * TTL, its own expiry, or any write in this process to one of the tables it
 * was read from, whichever comes first. Values loaded while such a write was
 * under way are not kept. Inside a transaction nothing is cached: a write
 * decides on what it reads (and locks) itself.
 */
export class WriteInvalidatedCache<V> {
  readonly #entries = new Map<string, { value: V; expiresAt: number }>();
  readonly #policy: WriteInvalidatedPolicy;
  #generation = 0;

  constructor(watch: WriteWatch, policy: WriteInvalidatedPolicy) {
    this.#policy = policy;
    watch.onWrite(policy.tables, () => this.clear());
  }

  /** The cached value, or `load()`'s; `expiresAt` (ms since epoch) ends the entry early. `db` is where `load` reads. */
  async get(db: Executor, key: string, load: () => Promise<{ value: V; expiresAt?: number }>): Promise<V> {
    if (db.isTransaction) return (await load()).value;
    const now = Date.now();
    const hit = this.#entries.get(key);
    if (hit && hit.expiresAt > now) return hit.value;
    const generation = this.#generation;
    const { value, expiresAt } = await load();
    if (generation === this.#generation) {
      if (this.#entries.size >= this.#policy.maxEntries) this.#entries.delete(this.#entries.keys().next().value!);
      this.#entries.delete(key);
      this.#entries.set(key, { value, expiresAt: Math.min(now + this.#policy.ttlMs, expiresAt ?? Infinity) });
    }
    return value;
  }

  clear(): void {
    this.#generation++;
    this.#entries.clear();
  }
}
