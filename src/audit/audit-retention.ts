import type { Logger } from 'pino';
import { deleteExpiredAuditLogs } from './audit-store.ts';
import type { Executor } from '../db/database.ts';

const BATCH_SIZE = 5000;
const HOUR_MS = 60 * 60 * 1000;

/** Deletes expired audit entries in small batches, so writers are never held up for long. */
export async function pruneExpiredAuditLogs(db: Executor, now = new Date(), batchSize = BATCH_SIZE): Promise<number> {
  let total = 0;
  for (;;) {
    const deleted = await deleteExpiredAuditLogs(db, now, batchSize);
    total += deleted;
    if (deleted < batchSize) return total;
  }
}

/** Runs the pruning now and then every hour; returns a function that stops it. */
export function scheduleAuditRetention(db: Executor, logger: Logger, intervalMs = HOUR_MS): () => void {
  const run = () =>
    pruneExpiredAuditLogs(db)
      .then((deleted) => deleted > 0 && logger.info({ deleted }, 'expired audit log entries deleted'))
      .catch((error: unknown) => logger.warn({ err: error }, 'audit retention run failed'));
  void run();
  const timer = setInterval(run, intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}
