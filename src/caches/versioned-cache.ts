import type { VersionedCacheName } from './cache-policies.ts';
import { CACHE_POLICIES } from './cache-policies.ts';
import type { CacheVersions } from './cache-versions.ts';
import type { ReadOnlyDb } from '../db/database.ts';

/**
 * A small in-process cache for what every request looks up (projects,
 * environments, folders, token rows, permissions). Its entries were loaded
 * under one version of the cache (cache-versions.ts) and are used only while
 * that is the current version, and until their own expiry. A value loaded
 * while the version moved is not kept. Inside the unit of work's transaction
 * the version is the one that transaction read (CacheVersions.inTransaction),
 * and a cache whose tables it wrote is not used; a row a write locks is never
 * read through a cache.
 */
export class VersionedCache<V> {
  readonly #entries = new Map<string, { value: V; expiresAt: number }>();
  /** Loads on their way under the current version: the callers that miss meanwhile share one (a fleet's reconciles miss together). */
  readonly #loading = new Map<string, Promise<V>>();
  readonly #versions: CacheVersions;
  readonly #name: VersionedCacheName;
  /** The version the entries were loaded under. */
  #version = 0;

  constructor(versions: CacheVersions, name: VersionedCacheName) {
    this.#versions = versions;
    this.#name = name;
  }

  /** The cached value, or `load()`'s; `expiresAt` (ms since epoch) ends the entry early. `db` is where `load` reads. */
  async get(db: ReadOnlyDb, key: string, load: () => Promise<{ value: V; expiresAt?: number }>): Promise<V> {
    const versions = db.isTransaction ? this.#versions.inTransaction(db, this.#name) : this.#versions.current();
    if (!versions) return (await load()).value;
    const version = (await versions)[this.#name];
    if (version > this.#version) {
      this.#entries.clear();
      this.#loading.clear();
      this.#version = version;
    }
    if (!this.#isCurrent(version)) return (await load()).value;
    const hit = this.#entries.get(key);
    if (hit && hit.expiresAt > Date.now()) return hit.value;
    // a load sent under this version reads what a load sent now would: any write since would have moved it
    const pending = this.#loading.get(key);
    if (pending) return pending;
    const loading = this.#load(key, version, load);
    this.#loading.set(key, loading);
    const done = () => this.#loading.get(key) === loading && this.#loading.delete(key);
    loading.then(done, done);
    return loading;
  }

  async #load(key: string, version: number, load: () => Promise<{ value: V; expiresAt?: number }>): Promise<V> {
    const { value, expiresAt = Infinity } = await load();
    // not kept when the version moved during the load: what it read may predate that write
    if (this.#isCurrent(version) && expiresAt > Date.now()) {
      if (this.#entries.size >= CACHE_POLICIES[this.#name].maxEntries) this.#entries.delete(this.#entries.keys().next().value!);
      this.#entries.delete(key);
      this.#entries.set(key, { value, expiresAt });
    }
    return value;
  }

  /** `version` is the one the entries are under, and no newer one is known to this process. */
  #isCurrent(version: number): boolean {
    return version === this.#version && version >= this.#versions.known(this.#name);
  }
}
