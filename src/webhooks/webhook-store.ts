import { sql } from 'kysely';
import { claimDueRows } from '../db/leases.ts';
import { isUuid } from '../db/uuid.ts';
import type { ChangeRecord } from '../changes/change-feed.ts';
import type { Webhook, WebhookDelivery } from '../db/schema.ts';
import type { Executor, ReadOnlyDb } from '../db/database.ts';

export type NewWebhook = Pick<Webhook, 'projectId' | 'environmentId' | 'secretPath' | 'url' | 'encryptedSecretKey' | 'cursorRevision'>;
export type WebhookProgress = Partial<
  Pick<Webhook, 'cursorRevision' | 'consecutiveFailures' | 'nextAttemptAt' | 'lastStatus' | 'lastRunErrorMessage' | 'isDisabled' | 'leaseUntil'>
>;

export async function insertWebhook(db: Executor, values: NewWebhook): Promise<Webhook> {
  return db.insertInto('webhooks').values(values).returningAll().executeTakeFirstOrThrow();
}

export async function findWebhook(db: ReadOnlyDb, id: string): Promise<Webhook | undefined> {
  if (!isUuid(id)) return undefined;
  return db.selectFrom('webhooks').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function listWebhooks(db: ReadOnlyDb, projectId: string, environmentId?: string): Promise<Webhook[]> {
  let query = db.selectFrom('webhooks').selectAll().where('projectId', '=', projectId);
  if (environmentId) query = query.where('environmentId', '=', environmentId);
  return query.orderBy('createdAt').orderBy('id').execute();
}

export async function countWebhooksOfProject(db: Executor, projectId: string): Promise<number> {
  const row = await db
    .selectFrom('webhooks')
    .select((eb) => eb.fn.countAll<number>().as('count'))
    .where('projectId', '=', projectId)
    .executeTakeFirst();
  return Number(row?.count ?? 0);
}

/** Undefined when the webhook is gone (deleted while a dispatcher pass held it, or while a request changed it). */
export async function updateWebhook(db: Executor, id: string, changes: WebhookProgress): Promise<Webhook | undefined> {
  return db
    .updateTable('webhooks')
    .set({ ...changes, updatedAt: new Date() })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirst();
}

export async function deleteWebhook(db: Executor, id: string): Promise<void> {
  await db.deleteFrom('webhooks').where('id', '=', id).execute();
}

/** Leases due, enabled webhooks to this replica until `leaseUntil` (db/leases.ts: per organization, SKIP LOCKED). */
export async function claimDueWebhooks(db: Executor, now: Date, leaseUntil: Date, limit: number, perOrg: number): Promise<Webhook[]> {
  const ids = await claimDueRows(
    db,
    { table: 'webhooks', source: sql`webhooks t JOIN projects p ON p.id = t.project_id`, org: sql`p.org_id`, eligible: sql<boolean>`NOT t.is_disabled` },
    now,
    leaseUntil,
    limit,
    perOrg,
  );
  if (ids.length === 0) return [];
  return db.selectFrom('webhooks').selectAll().where('id', 'in', ids).orderBy('nextAttemptAt').execute();
}

/** The project's change rows after `revision`, oldest first. */
export async function listProjectChangesAfter(db: ReadOnlyDb, projectId: string, revision: number, limit: number): Promise<ChangeRecord[]> {
  const rows = await db
    .selectFrom('changeLog')
    .select(['revision', 'projectId', 'environmentId', 'environmentSlug', 'secretPath', 'kind', 'createdAt'])
    .where('projectId', '=', projectId)
    .where('revision', '>', revision)
    .orderBy('revision')
    .limit(limit)
    .execute();
  return rows as ChangeRecord[];
}

/**
 * Logs a delivery attempt; false when the webhook is gone (deleted while it was delivered). FOR KEY SHARE holds the
 * webhook row until the insert commits, so a delete in between is seen here, not as a foreign key violation.
 */
export async function insertDelivery(db: Executor, values: Omit<WebhookDelivery, 'id' | 'createdAt'>): Promise<boolean> {
  const { rows } = await sql`
    INSERT INTO webhook_deliveries (webhook_id, revision, attempt, status, response_status, error)
    SELECT id, ${values.revision}::bigint, ${values.attempt}::integer, ${values.status}::text, ${values.responseStatus}::integer, ${values.error}::text
    FROM webhooks WHERE id = ${values.webhookId} FOR KEY SHARE
    RETURNING id`.execute(db);
  return rows.length > 0;
}

export async function listDeliveries(db: ReadOnlyDb, webhookId: string, limit: number): Promise<WebhookDelivery[]> {
  return db
    .selectFrom('webhookDeliveries')
    .selectAll()
    .where('webhookId', '=', webhookId)
    .orderBy('createdAt', 'desc')
    .orderBy('revision', 'desc')
    .limit(limit)
    .execute();
}
