/**
 * What a handler asks of the queue for its key once it returns:
 * nothing (done; its failure count is forgotten), to run again after a
 * delay (not a failure: the count is forgotten too), or to retry with
 * backoff (a failure: each consecutive one doubles the delay).
 */
export type Requeue = undefined | { readonly afterMs: number } | { readonly backoff: Backoff };

/** The first retry delay and the ceiling of a backoff (defaults: the queue's baseDelayMs and maxDelayMs). */
export interface Backoff {
  readonly baseMs?: number;
  readonly maxMs?: number;
}

/** Time as the queue sees it: the system's, or a test's that moves only when told (no test waits on a real delay). */
export interface Clock {
  now(): number;
  /** Calls `run` after `delayMs`; the answer cancels it. Never keeps the process alive. */
  after(delayMs: number, run: () => void): () => void;
}

export const systemClock: Clock = {
  now: () => Date.now(),
  after: (delayMs, run) => {
    const timer = setTimeout(run, delayMs);
    timer.unref();
    return () => clearTimeout(timer);
  },
};

export interface WorkQueueOptions<K> {
  /** Keys processed at the same time. */
  concurrency: number;
  /** First retry delay; doubles on each consecutive failure of a key, up to maxDelayMs. */
  baseDelayMs?: number;
  maxDelayMs?: number;
  /** The identity under which keys are deduplicated. */
  identify: (key: K) => string;
  /** Handles one key; a throw is a failure (retried with backoff, like { backoff: true }). */
  handler: (key: K) => Promise<Requeue>;
  /** A handler threw; `failures`: consecutive failures of the key, this one included. */
  onError?: (key: K, error: unknown, retryInMs: number, failures: number) => void;
  /** Keys for which this is true are taken before all others (e.g. what other keys depend on). */
  isUrgent?: (key: K) => boolean;
  /** Default: systemClock. */
  clock?: Clock;
  /** The jitter of a backoff, in [0, 1) (default Math.random). */
  random?: () => number;
}

/**
 * A rate-limited work queue in the manner of client-go's: a key waiting is
 * queued once however often it is added; a key being processed that is added
 * again runs once more afterwards; failures back off exponentially with
 * jitter; at most `concurrency` keys run at once.
 */
export class WorkQueue<K> {
  readonly #options: Required<Omit<WorkQueueOptions<K>, 'onError' | 'isUrgent'>> & Pick<WorkQueueOptions<K>, 'onError' | 'isUrgent'>;
  readonly #clock: Clock;
  /** Waiting keys (with when they were added): urgent ones, then the others, each first in first out. */
  readonly #urgent = new Fifo<Waiting<K>>();
  readonly #queue = new Fifo<Waiting<K>>();
  /** Identities of the keys waiting, being processed, and added again while processed. */
  readonly #queued = new Set<string>();
  readonly #processing = new Set<string>();
  readonly #dirty = new Map<string, K>();
  readonly #failures = new Map<string, number>();
  /** Cancels of the delayed adds, by identity. */
  readonly #timers = new Map<string, () => void>();
  readonly #idleWaiters: (() => void)[] = [];
  #running = false;

  constructor(options: WorkQueueOptions<K>) {
    // `?? default` after the spread: a caller passing `clock: undefined` gets the default too
    this.#options = { baseDelayMs: 200, maxDelayMs: 60_000, ...options, clock: options.clock ?? systemClock, random: options.random ?? Math.random };
    this.#clock = this.#options.clock;
  }

  start(): void {
    this.#running = true;
    this.#pump();
  }

  /** Stops taking new work and waits for the keys being processed. */
  async stop(): Promise<void> {
    this.#running = false;
    for (const cancel of this.#timers.values()) cancel();
    this.#timers.clear();
    while (this.#processing.size > 0) await new Promise((resolve) => setTimeout(resolve, 10));
  }

  add(key: K): void {
    const id = this.#options.identify(key);
    if (this.#processing.has(id)) {
      this.#dirty.set(id, key);
      return;
    }
    if (this.#queued.has(id)) return;
    this.#queued.add(id);
    (this.#options.isUrgent?.(key) ? this.#urgent : this.#queue).push({ key, addedAt: this.#clock.now() });
    this.#pump();
  }

  /** Adds the key after a delay (the earliest pending delay wins). */
  addAfter(key: K, delayMs: number): void {
    const id = this.#options.identify(key);
    if (this.#timers.has(id)) return;
    const cancel = this.#clock.after(delayMs, () => {
      this.#timers.delete(id);
      this.add(key);
    });
    this.#timers.set(id, cancel);
  }

  get length(): number {
    return this.#urgent.length + this.#queue.length;
  }

  /** Keys waiting or being processed. */
  get pending(): number {
    return this.length + this.#processing.size;
  }

  /** How long the oldest waiting key has waited (0 when none waits). */
  get oldestWaitMs(): number {
    const oldest = Math.min(this.#urgent.peek()?.addedAt ?? Infinity, this.#queue.peek()?.addedAt ?? Infinity);
    return oldest === Infinity ? 0 : this.#clock.now() - oldest;
  }

  /** Resolves when nothing is queued or processing (timers aside). */
  idle(): Promise<void> {
    if (this.#isIdle()) return Promise.resolve();
    return new Promise((resolve) => this.#idleWaiters.push(resolve));
  }

  #isIdle(): boolean {
    return this.length === 0 && this.#processing.size === 0;
  }

  #pump(): void {
    while (this.#running && this.#processing.size < this.#options.concurrency && this.length > 0) {
      const { key } = (this.#urgent.shift() ?? this.#queue.shift())!;
      const id = this.#options.identify(key);
      this.#queued.delete(id);
      this.#processing.add(id);
      void this.#process(key, id);
    }
    if (this.#isIdle()) this.#idleWaiters.splice(0).forEach((resolve) => resolve());
  }

  async #process(key: K, id: string): Promise<void> {
    try {
      const requeue = await this.#options.handler(key);
      if (requeue && 'backoff' in requeue) this.addAfter(key, this.#backoff(id, requeue.backoff));
      else {
        this.#failures.delete(id);
        if (requeue) this.addAfter(key, requeue.afterMs);
      }
    } catch (error) {
      const delay = this.#backoff(id, {});
      this.#options.onError?.(key, error, delay, this.#failures.get(id)!);
      this.addAfter(key, delay);
    } finally {
      this.#processing.delete(id);
      const again = this.#dirty.get(id);
      if (again !== undefined) {
        this.#dirty.delete(id);
        this.add(again);
      }
      this.#pump();
    }
  }

  /** The delay before a failed key's next try: doubling per consecutive failure, with jitter. */
  #backoff(id: string, { baseMs = this.#options.baseDelayMs, maxMs = this.#options.maxDelayMs }: Backoff): number {
    const failures = (this.#failures.get(id) ?? 0) + 1;
    this.#failures.set(id, failures);
    const ceiling = Math.min(maxMs, baseMs * 2 ** Math.min(failures - 1, 30));
    return Math.round(ceiling / 2 + this.#options.random() * (ceiling / 2));
  }
}

interface Waiting<K> {
  key: K;
  addedAt: number;
}

/** A first-in first-out list with O(1) shift (Array#shift moves every element). */
class Fifo<T> {
  #items: T[] = [];
  #head = 0;

  get length(): number {
    return this.#items.length - this.#head;
  }

  push(item: T): void {
    this.#items.push(item);
  }

  peek(): T | undefined {
    return this.#head < this.#items.length ? this.#items[this.#head] : undefined;
  }

  shift(): T | undefined {
    if (this.#head >= this.#items.length) return undefined;
    const key = this.#items[this.#head++];
    if (this.#head > 1024 && this.#head * 2 > this.#items.length) {
      this.#items = this.#items.slice(this.#head);
      this.#head = 0;
    }
    return key;
  }
}
