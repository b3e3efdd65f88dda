import type { WriteWatch } from './write-watch.ts';

export interface CacheOptions {
  /** The longest an entry is used: how late a write made by another replica is seen. */
  ttlMs: number;
  maxEntries: number;
}

/**
 * A small in-process cache for what every request looks up (token rows,
 * permissions). An entry lives until its TTL, its own expiry, or any write
 * in this process to one of the tables it was read from, whichever comes
 * first. Values loaded while such a write was under way are not kept.
 */
export class WriteInvalidatedCache<V> {
  readonly #entries = new Map<string, { value: V; expiresAt: number }>();
  readonly #options: CacheOptions;
  #generation = 0;

  constructor(watch: WriteWatch, tables: readonly string[], options: CacheOptions) {
    this.#options = options;
    watch.onWrite(tables, () => this.clear());
  }

  /** The cached value, or `load()`'s; `expiresAt` (ms since epoch) ends the entry early. */
  async get(key: string, load: () => Promise<{ value: V; expiresAt?: number }>): Promise<V> {
    const now = Date.now();
    const hit = this.#entries.get(key);
    if (hit && hit.expiresAt > now) return hit.value;
    const generation = this.#generation;
    const { value, expiresAt } = await load();
    if (generation === this.#generation) {
      if (this.#entries.size >= this.#options.maxEntries) this.#entries.delete(this.#entries.keys().next().value!);
      this.#entries.delete(key);
      this.#entries.set(key, { value, expiresAt: Math.min(now + this.#options.ttlMs, expiresAt ?? Infinity) });
    }
    return value;
  }

  clear(): void {
    this.#generation++;
    this.#entries.clear();
  }
}
