import type { Executor } from '../db/database.ts';
import { requireInstallation } from './installation-store.ts';

/** This database's installation id (made by migration 0007). */
export async function installationIdOf(db: Executor): Promise<string> {
  return (await requireInstallation(db)).id;
}
