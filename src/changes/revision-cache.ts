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
  readonly #entries = new Map<string, { revision: number; value: Promise<V> }>();
  readonly #maxEntries: number;

  constructor(maxEntries: number) {
    this.#maxEntries = maxEntries;
  }

  get(key: string, revision: number, load: () => Promise<V>): Promise<V> {
    const entry = this.#entries.get(key);
    if (entry && entry.revision === revision) return entry.value;
    if (entry && entry.revision > revision) return load();
    const value = load();
    this.#entries.delete(key);
    if (this.#entries.size >= this.#maxEntries) this.#entries.delete(this.#entries.keys().next().value!);
    this.#entries.set(key, { revision, value });
    value.catch(() => {
      if (this.#entries.get(key)?.value === value) this.#entries.delete(key);
    });
    return value;
  }

  get size(): number {
    return this.#entries.size;
  }
}
