import { AuditExportService } from '../audit/audit-export-service.ts';
import { AuditService } from '../audit/audit-service.ts';
import { AuthService } from '../auth/auth-service.ts';
import { BootstrapService } from '../bootstrap/bootstrap-service.ts';
import { ChangeFeed } from '../changes/change-feed.ts';
import { Keyring } from '../crypto/keyring.ts';
import { TokenSigner } from '../crypto/tokens.ts';
import type { Database } from '../db/database.ts';
import { EnvironmentService } from '../environments/environment-service.ts';
import { FolderService } from '../folders/folder-service.ts';
import { ImportService } from '../imports/import-service.ts';
import { IntegrationAuthService } from '../integrations/integration-auth-service.ts';
import { IntegrationService } from '../integrations/integration-service.ts';
import { PermissionService } from '../permissions/permission-service.ts';
import { ProjectService } from '../projects/project-service.ts';
import { SecretBatchService } from '../secrets/secret-batch-service.ts';
import { SecretReader } from '../secrets/secret-reader.ts';
import { SecretService } from '../secrets/secret-service.ts';
import { SecretTagging } from '../secrets/secret-tagging.ts';
import { TagService } from '../tags/tag-service.ts';

export interface SecurityKeys {
  /** 32 bytes, base64. */
  encryptionKey: string;
  authSecret: string;
}

export interface ServiceOptions {
  auditRetentionDays: number;
}

/** The composition root: every service, wired once per process. */
export function createServices(database: Database, keys: SecurityKeys, options: ServiceOptions) {
  const { db } = database;
  const deps = {
    db,
    permissions: new PermissionService(),
    audit: new AuditService(options.auditRetentionDays),
    changes: new ChangeFeed(),
    keyring: new Keyring(Buffer.from(keys.encryptionKey, 'base64')),
  };
  const auth = new AuthService(db, new TokenSigner(keys.authSecret));
  return {
    database,
    ...deps,
    auth,
    bootstrap: new BootstrapService(db, auth),
    projects: new ProjectService(deps),
    environments: new EnvironmentService(deps),
    folders: new FolderService(deps),
    auditExport: new AuditExportService(deps),
    secrets: new SecretService(deps),
    secretReader: new SecretReader(deps),
    secretBatch: new SecretBatchService(deps),
    secretTagging: new SecretTagging(deps),
    imports: new ImportService(deps),
    tags: new TagService(deps),
    integrationAuths: new IntegrationAuthService(deps),
    integrations: new IntegrationService(deps),
  };
}

export type Services = ReturnType<typeof createServices>;
