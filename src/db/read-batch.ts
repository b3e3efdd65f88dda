import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * Reads by key, many keys to one statement: the calls made while a read of the batch is under way, and those of the
 * same turn of the event loop, go into the next read together (at most `maxKeys` keys each; the same key once).
 *
 * A call is never answered by a read that started before it was made, so it sees every write committed before the
 * call, as a read of its own would. One read of a batch is under way at a time: a batch takes one connection.
 *
 * For the operator's resync, where each of 16 concurrent reconciles reads one row: one statement per row was a
 * tenth of its CPU in socket writes alone. Hand-written: DataLoader sends a batch whenever its turn of the event loop
 * ends, several at once, where this one has one read in flight and gathers the calls meanwhile into the next.
 *
 * A read serves many callers, so it runs in none's async context (a caller's request scope would give it that
 * caller's cache versions, for instance).
 */
export class ReadBatch<Key, Value> {
  readonly #read: (keys: Key[]) => Promise<Map<Key, Value>>;
  readonly #maxKeys: number;
  #waiting = new Map<Key, Waiter<Value>[]>();
  #reading = false;
  #scheduled = false;

  /** `read`: the values of the keys it finds (a key not in its map has none). */
  constructor(read: (keys: Key[]) => Promise<Map<Key, Value>>, options: { maxKeys: number }) {
    this.#read = read;
    this.#maxKeys = options.maxKeys;
  }

  /** The value of `key` as a read that starts after this call finds it; undefined if there is none. */
  get(key: Key): Promise<Value | undefined> {
    return new Promise((resolve, reject) => {
      const waiters = this.#waiting.get(key);
      if (waiters) waiters.push({ resolve, reject });
      else this.#waiting.set(key, [{ resolve, reject }]);
      this.#schedule();
    });
  }

  /** True while nothing waits and nothing is being read: the batch may be dropped. */
  get idle(): boolean {
    return !this.#reading && !this.#scheduled && this.#waiting.size === 0;
  }

  #schedule(): void {
    if (this.#reading || this.#scheduled) return;
    this.#scheduled = true;
    // the calls of this turn of the event loop join the read
    setImmediate(() =>
      inNoCallersContext(() => {
        this.#scheduled = false;
        void this.#readNext();
      }),
    );
  }

  /** Reads batch after batch until nothing waits: what comes while one is read waits for a read that starts after it. */
  async #readNext(): Promise<void> {
    this.#reading = true;
    while (this.#waiting.size > 0) {
      const batch = this.#take();
      try {
        const found = await this.#read([...batch.keys()]);
        for (const [key, waiters] of batch) for (const waiter of waiters) waiter.resolve(found.get(key));
      } catch (error) {
        for (const waiters of batch.values()) for (const waiter of waiters) waiter.reject(error);
      }
    }
    this.#reading = false;
  }

  /** The first `maxKeys` waiting keys, taken off the waiting ones. */
  #take(): Map<Key, Waiter<Value>[]> {
    if (this.#waiting.size <= this.#maxKeys) {
      const all = this.#waiting;
      this.#waiting = new Map();
      return all;
    }
    const batch = new Map<Key, Waiter<Value>[]>();
    for (const [key, waiters] of this.#waiting) {
      if (batch.size === this.#maxKeys) break;
      batch.set(key, waiters);
    }
    for (const key of batch.keys()) this.#waiting.delete(key);
    return batch;
  }
}

/** Runs a function in the async context of this module's loading: no request's, no reconcile's. */
const inNoCallersContext = AsyncLocalStorage.snapshot();

interface Waiter<Value> {
  resolve: (value: Value | undefined) => void;
  reject: (error: unknown) => void;
}
