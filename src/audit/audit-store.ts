import type { Executor } from '../db/database.ts';
import type { NewAuditLog } from '../db/schema.ts';

export async function insertAuditLog(db: Executor, row: NewAuditLog): Promise<void> {
  await db.insertInto('auditLogs').values(row).execute();
}
