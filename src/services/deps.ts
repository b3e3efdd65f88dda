import type { Kysely } from 'kysely';
import type { AuditService } from '../audit/audit-service.ts';
import type { ChangeFeed } from '../changes/change-feed.ts';
import type { Keyring } from '../crypto/keyring.ts';
import type { DB } from '../db/schema.ts';
import type { PermissionService } from '../permissions/permission-service.ts';
import type { Lookups } from '../projects/lookups.ts';

/** What every domain service is built with. */
export interface ServiceDeps {
  db: Kysely<DB>;
  permissions: PermissionService;
  audit: AuditService;
  changes: ChangeFeed;
  keyring: Keyring;
  /** Cached project and environment lookups for reads. */
  lookups: Lookups;
}
