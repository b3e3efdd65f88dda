import { randomBytes, randomUUID } from 'node:crypto';
import type { Actor } from '../actor/actor.ts';
import { CallerQuota, type HeldRequestLimit } from '../actor/caller-quota.ts';
import { ProjectCipher } from '../crypto/project-cipher.ts';
import type { Environment, Project, Webhook } from '../db/schema.ts';
import { findEnvironmentById } from '../environments/environment-store.ts';
import { BadRequestError, ForbiddenError, NotFoundError } from '../errors.ts';
import { normalizeSecretPath } from '../folders/secret-path.ts';
import type { Outbound } from '../outbound/outbound.ts';
import { receiverUrl } from '../outbound/receiver-url.ts';
import { compilePathGlob, pathGlobProblem } from '../patterns/patterns.ts';
import type { Action, PermissionSet } from '../permissions/permission-service.ts';
import type { ServiceDeps } from '../services/deps.ts';
import { mayKnowProject } from '../services/project-visibility.ts';
import type { WriteContext } from '../services/unit-of-work.ts';
import type { WebhookView } from './webhook-schema.ts';
import { type DeliveryClock, postSigned, webhookKeyContext } from './webhook-delivery.ts';
import { countWebhooksOfProject, deleteWebhook, findWebhook, insertWebhook, listDeliveries, listWebhooks, updateWebhook } from './webhook-store.ts';
import type { ReadOnlyDb } from '../db/database.ts';

/** At most this many webhooks per project: each is one more outbound request per change. */
export const MAX_WEBHOOKS_PER_PROJECT = 20;

/** Test deliveries under way at once, per caller and per organization: each holds an outbound request up to its timeout. */
export const WEBHOOK_TESTS_AT_ONCE: HeldRequestLimit = { perCaller: 2, perOrganization: 10 };

/** What a test delivery found: the receiver's status and a short reason (never its body), and how long it took. */
export interface WebhookTestResult {
  ok: boolean;
  responseStatus: number | null;
  error: string | null;
  durationMs: number;
}

export interface WebhookInput {
  environment: string;
  secretPath: string;
  webhookUrl: string;
  webhookSecretKey?: string;
}

/** Webhooks: per project, environment and path glob; delivered from the change feed by WebhookDispatcher. */
export class WebhookService {
  readonly #deps: ServiceDeps;
  readonly #outbound: Outbound;
  readonly #clock: DeliveryClock;
  readonly #tests = new CallerQuota(WEBHOOK_TESTS_AT_ONCE, { noun: 'webhook tests', remedy: 'let one answer first' });

  constructor(deps: ServiceDeps, outbound: Outbound, clock: DeliveryClock) {
    this.#deps = deps;
    this.#outbound = outbound;
    this.#clock = clock;
  }

  /** Creates a webhook that delivers changes committed from now on; answers the signing key once (generated when not given). */
  async create(actor: Actor, projectId: string, input: WebhookInput): Promise<{ webhook: WebhookView; secretKey: string }> {
    const url = receiverUrl(input.webhookUrl, 'webhookUrl', 'InvalidWebhookUrl');
    const secretPath = pathGlob(input.secretPath);
    return this.#write(actor, projectId, 'create', async (tx, project, permission) => {
      assertMayHearOf(permission, input.environment, secretPath);
      const environment = await this.#deps.lookups.requireEnvironment(tx.db, project.id, input.environment);
      if ((await countWebhooksOfProject(tx.db, project.id)) >= MAX_WEBHOOKS_PER_PROJECT) {
        throw new BadRequestError(`A project has at most ${MAX_WEBHOOKS_PER_PROJECT} webhooks`, 'TooManyWebhooks');
      }
      const secretKey = input.webhookSecretKey ?? randomBytes(32).toString('hex');
      const webhook = await insertWebhook(tx.db, {
        projectId: project.id,
        environmentId: environment.id,
        secretPath,
        url,
        encryptedSecretKey: new ProjectCipher(this.#deps.keyring, project).seal(webhookKeyContext(project.id), secretKey),
        cursorRevision: await this.#deps.changes.latestRevision(tx.db),
      });
      tx.audit({ project, type: 'create-webhook', metadata: webhookAudit(webhook, environment) });
      return { webhook: toWebhookView(webhook, environment), secretKey };
    });
  }

  async list(actor: Actor, projectId: string, filter: { environment?: string }): Promise<WebhookView[]> {
    const { db } = this.#deps;
    const project = await this.#authorize(db, actor, projectId, 'read');
    const environmentId = filter.environment ? (await this.#deps.lookups.requireEnvironment(db, project.id, filter.environment)).id : undefined;
    const webhooks = await listWebhooks(db, project.id, environmentId);
    return Promise.all(webhooks.map(async (webhook) => toWebhookView(webhook, await environmentOf(db, webhook))));
  }

  /** Enables or disables a webhook; enabling clears its failures and makes it due now (it resumes from its cursor). */
  async setDisabled(actor: Actor, webhookId: string, isDisabled: boolean): Promise<WebhookView> {
    return this.#onWebhook(actor, webhookId, 'edit', async (tx, project, webhook) => {
      const updated = stillThere(
        await updateWebhook(tx.db, webhook.id, isDisabled ? { isDisabled } : { isDisabled, consecutiveFailures: 0, nextAttemptAt: new Date() }),
        webhookId,
      );
      const environment = await environmentOf(tx.db, updated);
      tx.audit({ project, type: 'update-webhook-status', metadata: { ...webhookAudit(updated, environment), isDisabled } });
      return toWebhookView(updated, environment);
    });
  }

  /** Delivers again every matching change after `fromRevision` (re-enabling the webhook): the change feed is the source. */
  async replay(actor: Actor, webhookId: string, fromRevision: number): Promise<WebhookView> {
    return this.#onWebhook(actor, webhookId, 'edit', async (tx, project, webhook, permission) => {
      assertMayHearOf(permission, (await environmentOf(tx.db, webhook)).slug, webhook.secretPath);
      const latest = await this.#deps.changes.latestRevision(tx.db);
      if (fromRevision > latest) throw new BadRequestError(`Revision ${fromRevision} is newer than the newest one (${latest})`, 'RevisionAhead');
      const updated = stillThere(
        await updateWebhook(tx.db, webhook.id, { cursorRevision: fromRevision, isDisabled: false, consecutiveFailures: 0, nextAttemptAt: new Date() }),
        webhookId,
      );
      const environment = await environmentOf(tx.db, updated);
      tx.audit({ project, type: 'update-webhook-status', metadata: { ...webhookAudit(updated, environment), isDisabled: false, replayFrom: fromRevision } });
      return toWebhookView(updated, environment);
    });
  }

  /**
   * Sends the receiver a signed `test` delivery now, whether the webhook is enabled or not, and answers what it
   * found. A test is no delivery of a change: it moves no cursor, counts toward no failures (a receiver that refuses
   * tests never disables the webhook) and is not in the delivery log; it is audited as `test-webhook`. No
   * transaction is open while the receiver is asked.
   */
  async test(actor: Actor, webhookId: string): Promise<{ webhook: WebhookView; result: WebhookTestResult }> {
    const { db } = this.#deps;
    const webhook = await this.#requireWebhook(db, actor, webhookId);
    const project = await this.#authorize(db, actor, webhook.projectId, 'edit');
    const environment = await environmentOf(db, webhook);
    const release = this.#tests.take(actor);
    let result: WebhookTestResult;
    try {
      const started = performance.now();
      const payload = { event: 'test', project: { workspaceId: project.id, environment: environment.slug, secretPath: webhook.secretPath } };
      const answer = await postSigned(this.#deps, this.#outbound, webhook, project, payload, this.#clock.now());
      result = { ok: answer.ok, responseStatus: answer.status, error: answer.error, durationMs: Math.round(performance.now() - started) };
    } finally {
      release();
    }
    await this.#deps.unitOfWork.write(actor, async (tx) => {
      tx.authorizedBy('the caller was authorized to edit the webhook before it was tested');
      tx.audit({
        project,
        type: 'test-webhook',
        metadata: { ...webhookAudit(webhook, environment), ok: result.ok, responseStatus: result.responseStatus, error: result.error },
      });
    });
    return { webhook: toWebhookView(webhook, environment), result };
  }

  async delete(actor: Actor, webhookId: string): Promise<WebhookView> {
    return this.#onWebhook(actor, webhookId, 'delete', async (tx, project, webhook) => {
      const environment = await environmentOf(tx.db, webhook);
      await deleteWebhook(tx.db, webhook.id);
      tx.audit({ project, type: 'delete-webhook', metadata: webhookAudit(webhook, environment) });
      return toWebhookView(webhook, environment);
    });
  }

  /** The webhook's newest delivery attempts, newest first. */
  async deliveries(actor: Actor, webhookId: string, limit: number) {
    const { db } = this.#deps;
    const webhook = await this.#requireWebhook(db, actor, webhookId);
    await this.#authorize(db, actor, webhook.projectId, 'read');
    return (await listDeliveries(db, webhook.id, limit)).map((delivery) => ({
      id: delivery.id,
      revision: Number(delivery.revision),
      attempt: delivery.attempt,
      status: delivery.status,
      responseStatus: delivery.responseStatus,
      error: delivery.error,
      createdAt: delivery.createdAt.toISOString(),
    }));
  }

  #onWebhook<T>(
    actor: Actor,
    webhookId: string,
    action: Exclude<Action, 'read'>,
    work: (tx: WriteContext, project: Project, webhook: Webhook, permission: PermissionSet) => Promise<T>,
  ) {
    return this.#deps.unitOfWork.write(actor, async (tx) => {
      const webhook = await this.#requireWebhook(tx.db, actor, webhookId);
      const project = await tx.project({ id: webhook.projectId });
      const permission = await tx.authorize({ project, action, subject: 'webhooks' });
      return work(tx, project, webhook, permission);
    });
  }

  #write<T>(actor: Actor, projectId: string, action: Exclude<Action, 'read'>, work: (tx: WriteContext, project: Project, permission: PermissionSet) => Promise<T>) {
    return this.#deps.unitOfWork.write(actor, async (tx) => {
      const project = await tx.project({ id: projectId });
      const permission = await tx.authorize({ project, action, subject: 'webhooks' });
      return work(tx, project, permission);
    });
  }

  async #authorize(db: ReadOnlyDb, actor: Actor, projectId: string, action: Action): Promise<Project> {
    const project = await this.#deps.lookups.requireProject(db, { id: projectId });
    await this.#deps.permissions.assertProject({ actor, project, action, subject: 'webhooks' });
    return project;
  }

  async #requireWebhook(db: ReadOnlyDb, actor: Actor, webhookId: string): Promise<Webhook> {
    const webhook = await findWebhook(db, webhookId);
    if (!webhook || !(await mayKnowProject(this.#deps, db, actor, webhook.projectId))) throw new NotFoundError(`Webhook with ID '${webhookId}' not found`);
    return webhook;
  }
}

/**
 * A webhook tells its receiver which places of its environment changed (paths, never values): whoever aims or
 * replays one must be able to read secrets everywhere its glob reaches. Checked at the glob's literal base and at
 * an unguessable path two folders below it, so a role limited to one folder, or to one level, is refused a glob
 * that reaches past it.
 */
function assertMayHearOf(permission: PermissionSet, environment: string, glob: string): void {
  // the compiled glob's literal folders before its first wildcard ('' when it starts with one, or is negated)
  const { isGlob, base } = compilePathGlob(glob);
  const root = base === '' ? '/' : base;
  const probes = isGlob ? [root, `${root === '/' ? '' : root}/${randomUUID()}/${randomUUID()}`] : [glob];
  if (probes.every((secretPath) => permission.can('read', 'secrets', { environment, secretPath }))) return;
  throw new ForbiddenError(
    `A webhook on ${environment}:${glob} would tell its receiver of changes to places you may not read: you need to read secrets everywhere the path reaches`,
    'PermissionDenied',
  );
}

function pathGlob(glob: string): string {
  const problem = pathGlobProblem(glob);
  if (problem) throw new BadRequestError(`secretPath ${problem}`, 'InvalidPattern');
  return /[*?[\]{}!()]/.test(glob) ? glob : normalizeSecretPath(glob);
}

/** A webhook deleted between reading and changing it answers as an unknown id does. */
function stillThere(webhook: Webhook | undefined, webhookId: string): Webhook {
  if (!webhook) throw new NotFoundError(`Webhook with ID '${webhookId}' not found`);
  return webhook;
}

export async function environmentOf(db: ReadOnlyDb, webhook: Webhook): Promise<Environment> {
  const environment = await findEnvironmentById(db, webhook.environmentId);
  if (!environment) throw new NotFoundError(`Webhook with ID '${webhook.id}' not found`);
  return environment;
}

export function webhookAudit(webhook: Webhook, environment: Environment) {
  return { webhookId: webhook.id, environment: environment.slug, secretPath: webhook.secretPath, isDisabled: webhook.isDisabled };
}

export function toWebhookView(webhook: Webhook, environment: Environment): WebhookView {
  return {
    id: webhook.id,
    projectId: webhook.projectId,
    envId: environment.id,
    environment: { id: environment.id, slug: environment.slug, name: environment.name },
    secretPath: webhook.secretPath,
    url: webhook.url,
    type: 'general',
    isDisabled: webhook.isDisabled,
    consecutiveFailures: webhook.consecutiveFailures,
    cursorRevision: Number(webhook.cursorRevision),
    lastStatus: webhook.lastStatus,
    lastRunErrorMessage: webhook.lastRunErrorMessage,
    createdAt: webhook.createdAt.toISOString(),
    updatedAt: webhook.updatedAt.toISOString(),
  };
}
