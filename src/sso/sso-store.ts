import type { OrgOidcConfig } from '../db/schema.ts';
import type { Executor, ReadOnlyDb } from '../db/database.ts';

export interface OidcConfigValues {
  issuer: string;
  clientId: string;
  encryptedClientSecret: Buffer;
  scopes: string;
  allowedEmailDomains: string[];
  groupsClaim: string;
  groupMappings: unknown[];
  defaultOrgRole: string;
  isActive: boolean;
}

function toColumns(values: Partial<OidcConfigValues>) {
  const { allowedEmailDomains, groupMappings, ...rest } = values;
  return {
    ...rest,
    ...(allowedEmailDomains ? { allowedEmailDomains: JSON.stringify(allowedEmailDomains) } : {}),
    ...(groupMappings ? { groupMappings: JSON.stringify(groupMappings) } : {}),
  };
}

export async function findOidcConfig(db: ReadOnlyDb, orgId: string): Promise<OrgOidcConfig | undefined> {
  return db.selectFrom('orgOidcConfigs').selectAll().where('orgId', '=', orgId).executeTakeFirst();
}

export async function insertOidcConfig(db: Executor, orgId: string, values: OidcConfigValues): Promise<OrgOidcConfig> {
  return db
    .insertInto('orgOidcConfigs')
    .values({ orgId, ...toColumns(values) } as never)
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function updateOidcConfig(db: Executor, orgId: string, values: Partial<OidcConfigValues>): Promise<OrgOidcConfig> {
  return db
    .updateTable('orgOidcConfigs')
    .set({ ...toColumns(values), updatedAt: new Date() })
    .where('orgId', '=', orgId)
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** Every sealed client secret, for `coffer rotate-key`. */
export async function listSealedClientSecrets(db: Executor) {
  return db.selectFrom('orgOidcConfigs').select(['id', 'orgId', 'encryptedClientSecret']).execute();
}

export async function setSealedClientSecret(db: Executor, id: string, sealed: Buffer): Promise<void> {
  await db.updateTable('orgOidcConfigs').set({ encryptedClientSecret: sealed }).where('id', '=', id).execute();
}

// ---- organizations' sign-in policy ----

export async function findOrgBySlug(db: ReadOnlyDb, slug: string) {
  return db.selectFrom('organizations').selectAll().where('slug', '=', slug).executeTakeFirst();
}

export async function findOrgPolicy(db: Executor, orgId: string) {
  return db.selectFrom('organizations').select(['id', 'slug', 'authEnforced', 'enforceMfa']).where('id', '=', orgId).executeTakeFirst();
}

export async function updateOrgPolicy(db: Executor, orgId: string, values: { authEnforced?: boolean; enforceMfa?: boolean }) {
  return db
    .updateTable('organizations')
    .set({ ...values, updatedAt: new Date() })
    .where('id', '=', orgId)
    .returningAll()
    .executeTakeFirstOrThrow();
}

// ---- sign-ins under way ----

export async function insertLoginState(
  db: Executor,
  values: { stateDigest: Buffer; orgId: string; nonce: string; encryptedCodeVerifier: Buffer; userAgent: string | null; expiresAt: Date },
): Promise<void> {
  await db.insertInto('oidcLoginStates').values(values).execute();
}

/** Deletes the state and answers it: a state is good for one callback, even a failed one. Expired rows go too. */
export async function consumeLoginState(db: Executor, stateDigest: Buffer, now: Date) {
  await db.deleteFrom('oidcLoginStates').where('expiresAt', '<=', now).execute();
  return db.deleteFrom('oidcLoginStates').where('stateDigest', '=', stateDigest).returningAll().executeTakeFirst();
}

export async function findProjectsOfOrg(db: Executor, orgId: string, projectIds: string[]) {
  if (projectIds.length === 0) return [];
  return db.selectFrom('projects').select(['id']).where('orgId', '=', orgId).where('id', 'in', projectIds).execute();
}

export async function deleteAllLoginStates(db: Executor): Promise<void> {
  await db.deleteFrom('oidcLoginStates').execute();
}
