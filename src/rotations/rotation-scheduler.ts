import type { Logger } from 'pino';
import { repeatPasses } from '../services/repeating-pass.ts';

/** How often a replica looks for due rotations. */
export const PASS_INTERVAL_MS = 60_000;

/**
 * Runs due rotations every PASS_INTERVAL_MS on every replica: a run claims its rotation's row (rotation-service.ts),
 * so replicas never run the same rotation at once, and a rotation a dead replica left half done is resumed by the next pass.
 * One pass at a time per process; a pass starts at most RUNS_PER_PASS runs.
 */
export function scheduleRotations(runDue: () => Promise<number>, logger: Logger): () => void {
  const pass = async () => {
    const ran = await runDue();
    if (ran > 0) logger.info({ ran }, 'secret rotations ran');
    return false;
  };
  return repeatPasses(pass, { intervalMs: PASS_INTERVAL_MS, failure: 'secret rotation pass failed', logger });
}
