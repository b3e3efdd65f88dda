export interface RevisionCacheOptions<V> {
  /** The most the entries may weigh together; the least recently stored go first. */
  maxWeight: number;
  /** What one value weighs (secrets in a listing, bytes of a body). */
  weigh: (value: V) => number;
}

interface Entry<V> {
  revision: number;
  value: Promise<V>;
  weight: number;
}

/**
 * Values derived from a project's data, each kept with the project's
 * change-feed revision it was read at, and reused only while that revision is
 * still the project's latest. Revisions commit in order and every mutation of
 * what a listing shows commits one in its own transaction, so an entry read at
 * the revision a request just saw is current for any replica that wrote it.
 *
 * The caller reads the revision before loading: a change committed while the
 * value loads leaves it under the older revision, so it is not reused.
 */
export class RevisionCache<V> {
  readonly #entries = new Map<string, Entry<V>>();
  readonly #options: RevisionCacheOptions<V>;
  #weight = 0;

  constructor(options: RevisionCacheOptions<V>) {
    this.#options = options;
  }

  get(key: string, revision: number, load: () => Promise<V>): Promise<V> {
    const current = this.#entries.get(key);
    if (current && current.revision === revision) return current.value;
    if (current && current.revision > revision) return load();
    this.#remove(key);
    const entry: Entry<V> = { revision, value: load(), weight: 0 };
    this.#entries.set(key, entry);
    entry.value.then(
      (value) => this.#weighed(key, entry, this.#options.weigh(value)),
      () => this.#entries.get(key) === entry && this.#remove(key),
    );
    return entry.value;
  }

  /**
   * Loads the value again whatever is kept, and keeps it in place of the old one: a read that must see
   * the database (a forced sync) also repairs what later reads at the same revision are given.
   */
  refresh(key: string, revision: number, load: () => Promise<V>): Promise<V> {
    this.#remove(key);
    return this.get(key, revision, load);
  }

  /** Entries kept, and what they weigh together. */
  get size(): { entries: number; weight: number } {
    return { entries: this.#entries.size, weight: this.#weight };
  }

  #weighed(key: string, entry: Entry<V>, weight: number): void {
    if (this.#entries.get(key) !== entry) return;
    entry.weight = weight;
    this.#weight += weight;
    for (const oldest of this.#entries.keys()) {
      if (this.#weight <= this.#options.maxWeight) break;
      this.#remove(oldest);
    }
  }

  #remove(key: string): void {
    const entry = this.#entries.get(key);
    if (!entry) return;
    this.#weight -= entry.weight;
    this.#entries.delete(key);
  }
}
