import { RateLimitError } from '../errors.ts';
import type { Actor } from './actor.ts';

/**
 * How many held requests of one kind (change streams, revision waits) each
 * caller has under way, capped: one more is refused with 429 and `refusal`.
 */
export class CallerQuota {
  readonly #limit: number;
  readonly #refusal: string;
  readonly #held = new Map<string, number>();

  constructor(limit: number, refusal: string) {
    this.#limit = limit;
    this.#refusal = refusal;
  }

  /** Takes a place for the actor (429 when it holds the limit already); the answer gives it back, once. */
  take(actor: Actor): () => void {
    const key = `${actor.kind}:${actor.id}`;
    const held = this.#held.get(key) ?? 0;
    if (held >= this.#limit) throw new RateLimitError(this.#refusal);
    this.#held.set(key, held + 1);
    let returned = false;
    return () => {
      if (returned) return;
      returned = true;
      const left = (this.#held.get(key) ?? 1) - 1;
      if (left > 0) this.#held.set(key, left);
      else this.#held.delete(key);
    };
  }
}
