import { requireInstallation } from './installation-store.ts';
import type { ReadOnlyDb } from '../db/database.ts';

/** This database's installation id (made by migration 0007). */
export async function installationIdOf(db: ReadOnlyDb): Promise<string> {
  return (await requireInstallation(db)).id;
}
