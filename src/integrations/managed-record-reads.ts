import type { ReadOnlyDb } from '../db/database.ts';
import { ReadBatch } from '../db/read-batch.ts';
import { findIntegrationsByManagedByWithTargetKeys, type IntegrationWithTargetKeys } from './integration-store.ts';

/** At most this many records per statement. */
const MAX_RECORDS_PER_READ = 500;

/**
 * The operator's reads of its integration records by `<namespace>/<name>` (every reconcile makes one), batched per
 * organization and cluster (db/read-batch.ts): each read still starts after its call, so it sees what was committed.
 */
export class ManagedRecordReads {
  readonly #db: ReadOnlyDb;
  readonly #batches = new Map<string, ReadBatch<string, IntegrationWithTargetKeys>>();

  constructor(db: ReadOnlyDb) {
    this.#db = db;
  }

  read(orgId: string, cluster: string, managedBy: string): Promise<IntegrationWithTargetKeys | undefined> {
    const group = JSON.stringify([orgId, cluster]);
    let batch = this.#batches.get(group);
    if (!batch) {
      batch = new ReadBatch((keys) => findIntegrationsByManagedByWithTargetKeys(this.#db, orgId, cluster, keys), { maxKeys: MAX_RECORDS_PER_READ });
      this.#batches.set(group, batch);
    }
    const read = batch.get(managedBy);
    const dropIfIdle = () => {
      if (batch.idle && this.#batches.get(group) === batch) this.#batches.delete(group);
    };
    read.then(dropIfIdle, dropIfIdle);
    return read;
  }
}
