/**
 * Writes whose answer has not come back yet. A change they committed can be heard (NOTIFY, the change stream)
 * before that answer tells its writer which revision it was; a reader that must know whether a change is its own
 * waits for settled() first.
 */
export class WritesUnderWay {
  readonly #pending = new Set<Promise<unknown>>();

  /** Keeps `write` until it is answered (or fails); answers what it answers. */
  async track<T>(write: Promise<T>): Promise<T> {
    this.#pending.add(write);
    try {
      return await write;
    } finally {
      this.#pending.delete(write);
    }
  }

  /** Resolves once every write under way now has been answered or has failed. */
  async settled(): Promise<void> {
    await Promise.allSettled([...this.#pending]);
  }
}
