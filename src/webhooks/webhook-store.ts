import { sql } from 'kysely';
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

export async function updateWebhook(db: Executor, id: string, changes: WebhookProgress): Promise<Webhook> {
  return db
    .updateTable('webhooks')
    .set({ ...changes, updatedAt: new Date() })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function deleteWebhook(db: Executor, id: string): Promise<void> {
  await db.deleteFrom('webhooks').where('id', '=', id).execute();
}

/**
 * Leases due webhooks to this replica until `leaseUntil`: enabled, due, not leased by a live claim, at most
 * `perOrg` of one organization and `limit` in all. SKIP LOCKED: replicas claiming at once take different rows.
 */
export async function claimDueWebhooks(db: Executor, now: Date, leaseUntil: Date, limit: number, perOrg: number): Promise<Webhook[]> {
  const { rows } = await sql<{ id: string }>`
    WITH due AS (
      SELECT w.id, row_number() OVER (PARTITION BY p.org_id ORDER BY w.next_attempt_at, w.id) AS place
      FROM webhooks w JOIN projects p ON p.id = w.project_id
      WHERE NOT w.is_disabled AND w.next_attempt_at <= ${now} AND (w.lease_until IS NULL OR w.lease_until < ${now})
    ),
    picked AS (
      SELECT webhooks.id FROM webhooks JOIN due ON due.id = webhooks.id
      WHERE due.place <= ${perOrg}
      ORDER BY webhooks.next_attempt_at LIMIT ${limit}
      FOR UPDATE OF webhooks SKIP LOCKED
    )
    UPDATE webhooks SET lease_until = ${leaseUntil} FROM picked WHERE webhooks.id = picked.id RETURNING webhooks.id`.execute(db);
  if (rows.length === 0) return [];
  return db
    .selectFrom('webhooks')
    .selectAll()
    .where(
      'id',
      'in',
      rows.map((row) => row.id),
    )
    .orderBy('nextAttemptAt')
    .execute();
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

export async function insertDelivery(db: Executor, values: Omit<WebhookDelivery, 'id' | 'createdAt'>): Promise<void> {
  await db.insertInto('webhookDeliveries').values(values).execute();
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
