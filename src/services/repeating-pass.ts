import type { Logger } from 'pino';

/**
 * Runs a background pass now and again `intervalMs` after each one ends, one pass at a time in this process, until
 * the answer is called. A pass that answers `true` (a full batch: more may be due now) runs again at once; one that
 * fails is logged as `failure` and tried again at the next interval. Every replica runs its own passes, so what a
 * pass does must be safe when replicas overlap (the rotation and lease-expiry passes claim their rows first).
 */
export function repeatPasses(pass: () => Promise<boolean>, options: { intervalMs: number; failure: string; logger: Logger }): () => void {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  const run = async (): Promise<void> => {
    try {
      if ((await pass()) && !stopped) return run();
    } catch (error) {
      options.logger.warn({ err: error }, options.failure);
    }
    if (!stopped) timer = setTimeout(() => void run(), options.intervalMs).unref();
  };
  void run();
  return () => {
    stopped = true;
    clearTimeout(timer);
  };
}
