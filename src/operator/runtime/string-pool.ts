/**
 * One copy of each short string the informers' objects repeat. JSON.parse
 * makes a new string for every value it reads, so 10,000 cached Integrations
 * held 10,000 copies of their apiVersion, kind, namespace and condition
 * message (14 MiB of an operator's 39 MiB of strings at 10,000).
 *
 * The pool is emptied when full instead of evicting one by one: values seen
 * once (uids, resourceVersions, timestamps) pass through it and go, and the
 * repeated ones are back after the next object. Memory stays bounded by
 * capacity × maxLength whatever the cluster holds.
 */
export class StringPool {
  readonly #strings = new Map<string, string>();
  readonly #capacity: number;
  readonly #maxLength: number;

  constructor(capacity = 8_192, maxLength = 128) {
    this.#capacity = capacity;
    this.#maxLength = maxLength;
  }

  get size(): number {
    return this.#strings.size;
  }

  holds(value: string): boolean {
    return this.#strings.has(value);
  }

  intern(value: string): string {
    if (value.length > this.#maxLength) return value;
    const pooled = this.#strings.get(value);
    if (pooled !== undefined) return pooled;
    if (this.#strings.size >= this.#capacity) this.#strings.clear();
    this.#strings.set(value, value);
    return value;
  }

  /**
   * Replaces, in place, every string in a parsed object by its pooled copy,
   * except under the top-level keys given (shareStrings says which).
   */
  internObject(object: Record<string, unknown>, skippedTopLevelKeys: ReadonlySet<string>): void {
    this.#internEntries(object, MAX_DEPTH, skippedTopLevelKeys);
  }

  #internValue(value: unknown, depth: number): unknown {
    if (typeof value === 'string') return this.intern(value);
    if (depth === 0 || value === null || typeof value !== 'object') return value;
    if (Array.isArray(value)) {
      for (let index = 0; index < value.length; index++) value[index] = this.#internValue(value[index], depth - 1);
    } else {
      this.#internEntries(value as Record<string, unknown>, depth - 1);
    }
    return value;
  }

  #internEntries(record: Record<string, unknown>, depth: number, skipped: ReadonlySet<string> = NOTHING_SKIPPED): void {
    for (const key of Object.keys(record)) {
      // JSON.parse makes "__proto__" an own key; assigning it would set the prototype instead
      if (key !== '__proto__' && !skipped.has(key)) record[key] = this.#internValue(record[key], depth);
    }
  }
}

const NOTHING_SKIPPED: ReadonlySet<string> = new Set();

/** A Secret's and a ConfigMap's values, and the metadata (pooled on its own, without its annotations). */
const SKIPPED_AT_TOP: ReadonlySet<string> = new Set(['data', 'stringData', 'binaryData', 'metadata']);
/** kubectl's last-applied-configuration annotation of a small Secret holds its data. */
const ANNOTATIONS: ReadonlySet<string> = new Set(['annotations']);

/**
 * Pools a Kubernetes object's strings, except its values (`data`, `stringData`, `binaryData`) and its
 * annotations: nothing a Secret holds outlives the object in the pool.
 */
export function shareStrings(pool: StringPool, object: { metadata?: object }): void {
  pool.internObject(object, SKIPPED_AT_TOP);
  if (object.metadata) pool.internObject(object.metadata as Record<string, unknown>, ANNOTATIONS);
}

/** Deeper than any Kubernetes object nests; below it, strings are left as parsed. */
const MAX_DEPTH = 32;
