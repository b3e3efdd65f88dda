import type { Logger } from 'pino';

/** Time as the scheduler sees it: real in production, a manual clock in tests (test/support/manual-clock.ts). */
export interface SchedulerClock {
  now(): number;
  after(delayMs: number, run: () => void): () => void;
}

export const realClock: SchedulerClock = {
  now: () => Date.now(),
  after(delayMs, run) {
    const timer = setTimeout(run, delayMs);
    timer.unref();
    return () => clearTimeout(timer);
  },
};

/** How often a replica looks for due rotations. */
export const PASS_INTERVAL_MS = 60_000;

/**
 * Runs due rotations every PASS_INTERVAL_MS on every replica: a run claims its rotation's row (rotation-service.ts),
 * so replicas never run the same rotation at once, and a rotation a dead replica left half done is resumed by the next pass.
 * One pass at a time per process; a pass starts at most RUNS_PER_PASS runs.
 */
export function scheduleRotations(runDue: () => Promise<number>, logger: Logger, clock: SchedulerClock = realClock): () => void {
  let cancel: (() => void) | undefined;
  let stopped = false;
  const pass = () => {
    void runDue()
      .then((ran) => ran > 0 && logger.info({ ran }, 'secret rotations ran'))
      .catch((error: unknown) => logger.warn({ err: error }, 'secret rotation pass failed'))
      .finally(() => {
        if (!stopped) cancel = clock.after(PASS_INTERVAL_MS, pass);
      });
  };
  pass();
  return () => {
    stopped = true;
    cancel?.();
  };
}
