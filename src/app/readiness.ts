import { listMigrations, pendingMigrations } from '../db/migrate.ts';
import { ping } from '../db/statements.ts';
import type { ReadOnlyDb } from '../db/database.ts';

export { listMigrations };

/** Why the instance cannot serve (database unreachable, migrations pending), or null. */
export async function readinessProblem(db: ReadOnlyDb, shipped: ReturnType<typeof listMigrations>): Promise<string | null> {
  try {
    await ping(db);
    const pending = await pendingMigrations(db, shipped);
    return pending.length > 0 ? `pending migrations: ${pending.join(', ')}` : null;
  } catch {
    return 'database unreachable';
  }
}
