import type { Clock } from '../../src/operator/runtime/work-queue.ts';

/**
 * A clock that moves only when a test says so: what the code under test scheduled is
 * visible (`pending`), and `advance` runs what falls due, in order. No test waits on real time.
 */
export class ManualClock implements Clock {
  #now = 0;
  #nextId = 0;
  readonly #scheduled = new Map<number, { at: number; run: () => void }>();

  now(): number {
    return this.#now;
  }

  after(delayMs: number, run: () => void): () => void {
    const id = this.#nextId++;
    this.#scheduled.set(id, { at: this.#now + delayMs, run });
    return () => this.#scheduled.delete(id);
  }

  /** The delays still scheduled, from now, soonest first. */
  get pending(): number[] {
    return [...this.#scheduled.values()].map(({ at }) => at - this.#now).sort((a, b) => a - b);
  }

  /** Moves time on by `ms`, running each scheduled call that falls due on the way. */
  advance(ms: number): void {
    const until = this.#now + ms;
    for (;;) {
      const due = [...this.#scheduled.entries()].filter(([, { at }]) => at <= until).sort(([, a], [, b]) => a.at - b.at)[0];
      if (!due) break;
      this.#scheduled.delete(due[0]);
      this.#now = due[1].at;
      due[1].run();
    }
    this.#now = until;
  }
}
