import type { AuditService } from '../audit/audit-service.ts';
import type { ChangeFeed } from '../changes/change-feed.ts';
import type { Keyring } from '../crypto/keyring.ts';
import type { ReadOnlyDb } from '../db/database.ts';
import type { PermissionService } from '../permissions/permission-service.ts';
import type { Lookups } from './lookups.ts';
import type { UnitOfWork } from './unit-of-work.ts';

/** What every domain service is built with. */
export interface ServiceDeps {
  /** For reads only (the type has no insert, update, delete or transaction): every write goes through `unitOfWork`. */
  db: ReadOnlyDb;
  unitOfWork: UnitOfWork;
  permissions: PermissionService;
  /** Reads' audit entries (recordRead); writes' go through the unit of work. */
  audit: AuditService;
  changes: ChangeFeed;
  keyring: Keyring;
  /** Projects, environments and folders, cached for reads. */
  lookups: Lookups;
}
