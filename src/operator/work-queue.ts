export interface WorkQueueOptions {
  /** Keys processed at the same time. */
  concurrency: number;
  /** First retry delay; doubles on each consecutive failure of a key, up to maxDelayMs. */
  baseDelayMs?: number;
  maxDelayMs?: number;
  /** Handles one key; a throw schedules a retry with backoff. Resolves to a delay to recheck later, if any. */
  handler: (key: string) => Promise<number | void>;
  onError?: (key: string, error: unknown, retryInMs: number) => void;
  /** Keys for which this is true are taken before all others (e.g. what other keys depend on). */
  isUrgent?: (key: string) => boolean;
}

/**
 * A rate-limited work queue in the manner of client-go's: a key waiting is
 * queued once however often it is added; a key being processed that is added
 * again runs once more afterwards; failures back off exponentially with
 * jitter; at most `concurrency` keys run at once.
 */
export class WorkQueue {
  readonly #options: Required<Omit<WorkQueueOptions, 'onError' | 'isUrgent'>> & Pick<WorkQueueOptions, 'onError' | 'isUrgent'>;
  /** Waiting keys: urgent ones, then the others, each first in first out. */
  readonly #urgent = new Fifo();
  readonly #queue = new Fifo();
  readonly #queued = new Set<string>();
  readonly #processing = new Set<string>();
  readonly #dirty = new Set<string>();
  readonly #failures = new Map<string, number>();
  readonly #timers = new Map<string, NodeJS.Timeout>();
  readonly #idleWaiters: (() => void)[] = [];
  #running = false;

  constructor(options: WorkQueueOptions) {
    this.#options = { baseDelayMs: 200, maxDelayMs: 60_000, ...options };
  }

  start(): void {
    this.#running = true;
    this.#pump();
  }

  /** Stops taking new work and waits for the keys being processed. */
  async stop(): Promise<void> {
    this.#running = false;
    for (const timer of this.#timers.values()) clearTimeout(timer);
    this.#timers.clear();
    while (this.#processing.size > 0) await new Promise((resolve) => setTimeout(resolve, 10));
  }

  add(key: string): void {
    if (this.#processing.has(key)) {
      this.#dirty.add(key);
      return;
    }
    if (this.#queued.has(key)) return;
    this.#queued.add(key);
    (this.#options.isUrgent?.(key) ? this.#urgent : this.#queue).push(key);
    this.#pump();
  }

  /** Adds the key after a delay (the earliest pending delay wins). */
  addAfter(key: string, delayMs: number): void {
    if (this.#timers.has(key)) return;
    const timer = setTimeout(() => {
      this.#timers.delete(key);
      this.add(key);
    }, delayMs);
    timer.unref();
    this.#timers.set(key, timer);
  }

  get length(): number {
    return this.#urgent.length + this.#queue.length;
  }

  /** Keys waiting or being processed. */
  get pending(): number {
    return this.length + this.#processing.size;
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
      const key = (this.#urgent.shift() ?? this.#queue.shift())!;
      this.#queued.delete(key);
      this.#processing.add(key);
      void this.#process(key);
    }
    if (this.#isIdle()) this.#idleWaiters.splice(0).forEach((resolve) => resolve());
  }

  async #process(key: string): Promise<void> {
    try {
      const recheckInMs = await this.#options.handler(key);
      this.#failures.delete(key);
      if (typeof recheckInMs === 'number') this.addAfter(key, recheckInMs);
    } catch (error) {
      const delay = this.#backoff(key);
      this.#options.onError?.(key, error, delay);
      this.addAfter(key, delay);
    } finally {
      this.#processing.delete(key);
      if (this.#dirty.delete(key)) this.add(key);
      this.#pump();
    }
  }

  #backoff(key: string): number {
    const failures = (this.#failures.get(key) ?? 0) + 1;
    this.#failures.set(key, failures);
    const ceiling = Math.min(this.#options.maxDelayMs, this.#options.baseDelayMs * 2 ** (failures - 1));
    return Math.round(ceiling / 2 + Math.random() * (ceiling / 2));
  }
}

/** A first-in first-out list of keys with O(1) shift (Array#shift moves every element). */
class Fifo {
  #items: string[] = [];
  #head = 0;

  get length(): number {
    return this.#items.length - this.#head;
  }

  push(key: string): void {
    this.#items.push(key);
  }

  shift(): string | undefined {
    if (this.#head >= this.#items.length) return undefined;
    const key = this.#items[this.#head++];
    if (this.#head > 1024 && this.#head * 2 > this.#items.length) {
      this.#items = this.#items.slice(this.#head);
      this.#head = 0;
    }
    return key;
  }
}
