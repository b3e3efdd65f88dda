/**
 * Which statements one PostgreSQL connection keeps prepared (named), so that a statement sent again is neither
 * parsed nor, once PostgreSQL settles on a generic plan, planned again: at the operator's cold start, parsing and
 * planning were about half of PostgreSQL's CPU (bench/RESULTS.md).
 *
 * - A statement is prepared the second time its text is seen on the connection: a one-off (a listing of some
 *   number of ids) never is. The texts seen once are remembered up to a bound too.
 * - At most `capacity` are prepared; the least recently used one makes room, deallocated on the server first, and
 *   only while no transaction is open (a statement's failure then cannot be the eviction's). Inside a transaction
 *   at capacity, a new statement goes unnamed.
 */
export class PreparedStatements {
  readonly #capacity: number;
  /** Prepared: text → name, least recently used first. */
  readonly #prepared = new Map<string, string>();
  /** Seen once and not prepared, oldest first. */
  readonly #seen = new Set<string>();
  #named = 0;

  constructor(capacity = PREPARED_PER_CONNECTION) {
    this.#capacity = capacity;
  }

  /**
   * How to send `text`: under the name it is (or is to be) prepared as, and which prepared one to deallocate first;
   * no name: unnamed. `canEvict`: no transaction is open on the connection.
   */
  plan(text: string, canEvict: boolean): { name?: string; evict?: string } {
    const name = this.#prepared.get(text);
    if (name !== undefined) {
      this.#prepared.delete(text);
      this.#prepared.set(text, name);
      return { name };
    }
    if (!this.#seen.delete(text)) {
      this.#seen.add(text);
      if (this.#seen.size > this.#capacity) this.#seen.delete(this.#seen.values().next().value!);
      return {};
    }
    let evict: string | undefined;
    if (this.#prepared.size >= this.#capacity) {
      if (!canEvict) return {};
      const [oldest, oldestName] = this.#prepared.entries().next().value!;
      this.#prepared.delete(oldest);
      evict = oldestName;
    }
    const created = `coffer_${++this.#named}`;
    this.#prepared.set(text, created);
    return evict === undefined ? { name: created } : { name: created, evict };
  }

  /** `text` was not prepared after all (PostgreSQL refused to parse it): its name is not to be used. */
  forget(text: string): void {
    this.#prepared.delete(text);
  }
}

/** Prepared statements kept per connection (each holds its parse tree and plans in the backend's memory). */
export const PREPARED_PER_CONNECTION = 256;

/**
 * PostgreSQL refuses to run a prepared statement whose result columns a migration changed (a `select *` of a table
 * that gained a column): a process still running the release before it hits this once per statement and connection.
 */
export function isOutdatedPreparedStatement(error: unknown): boolean {
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
  return code === '0A000' && typeof message === 'string' && message.includes('cached plan must not change result type');
}
