import type { Logger } from 'pino';
import type { RequestOrigin } from '../actor/actor.ts';
import type { ChangeRecord } from '../changes/change-feed.ts';
import type { Webhook } from '../db/schema.ts';
import { compilePathGlob } from '../patterns/patterns.ts';
import type { ServiceDeps } from '../services/deps.ts';
import type { Outbound } from '../outbound/outbound.ts';
import { retryDelay } from '../outbound/receiver-url.ts';
import { eachWithin } from '../outbound/bounded-pool.ts';
import { environmentOf, webhookAudit } from './webhook-service.ts';
import { type DeliveryClock, postSigned } from './webhook-delivery.ts';
import { claimDueWebhooks, insertDelivery, listProjectChangesAfter, updateWebhook } from './webhook-store.ts';
import type { Executor } from '../db/database.ts';

export interface DispatchLimits {
  /** Webhooks one run works on, in all and of one organization (several replicas: each claims its own). */
  perRun: number;
  perOrg: number;
  /** Webhooks a run delivers to at once: a slow receiver holds only its own place (each webhook's changes still go in order). */
  inParallel: number;
  /** Changes one webhook delivers per run. */
  changesPerRun: number;
  /** How long a claim holds before another replica may take the webhook (a replica that died mid-run). */
  leaseMs: number;
  /** Failures in a row that disable a webhook (`update-webhook-status`). */
  maxFailures: number;
  /** The first retry's delay; each further failure doubles it, up to maxBackoffMs. */
  backoffMs: number;
  maxBackoffMs: number;
}

export const DEFAULT_DISPATCH_LIMITS: DispatchLimits = {
  perRun: 50,
  perOrg: 10,
  inParallel: 8,
  changesPerRun: 100,
  leaseMs: 60_000,
  maxFailures: 5,
  backoffMs: 1_000,
  maxBackoffMs: 5 * 60_000,
};

/** The kinds of change that alter what a place resolves to: the ones a webhook delivers. */
const DELIVERED_KINDS = new Set(['secret', 'folder', 'import']);
const DISPATCHER_ORIGIN: RequestOrigin = { ip: null, userAgent: 'coffer-webhook-dispatcher', userAgentType: 'other' };

/**
 * Delivers the change feed to webhooks, in revision order, from each webhook's cursor: a delivery that fails stops
 * the webhook until its backoff ends (the cursor stays, so nothing is skipped); `maxFailures` in a row disable it.
 * At least once: a replica that dies after the receiver answered and before the cursor moved delivers that change again.
 */
export class WebhookDispatcher {
  readonly #deps: ServiceDeps;
  /** Its own bookkeeping (leases, the delivery log, cursors and backoff): operational state written outside a unit of work, like the login throttle's. */
  readonly #bookkeeping: Executor;
  readonly #outbound: Outbound;
  readonly #clock: DeliveryClock;
  readonly #limits: DispatchLimits;

  constructor(deps: ServiceDeps, bookkeeping: Executor, outbound: Outbound, clock: DeliveryClock, limits: Partial<DispatchLimits> = {}) {
    this.#deps = deps;
    this.#bookkeeping = bookkeeping;
    this.#outbound = outbound;
    this.#clock = clock;
    this.#limits = { ...DEFAULT_DISPATCH_LIMITS, ...limits };
  }

  /** One pass over the due webhooks; answers how many delivery attempts it made. */
  async runOnce(): Promise<number> {
    const now = this.#clock.now();
    const claimed = await claimDueWebhooks(this.#bookkeeping, new Date(now), new Date(now + this.#limits.leaseMs), this.#limits.perRun, this.#limits.perOrg);
    const attempts = await eachWithin(claimed, this.#limits.inParallel, (webhook) => this.#advance(webhook));
    return attempts.reduce((sum, count) => sum + count, 0);
  }

  /**
   * Runs on every committed change and every `intervalMs` (retries falling due); returns a function that stops it.
   * Passes start at least `spacingMs` apart: the first commit after a quiet spell starts one at once, a burst of
   * commits one per `spacingMs` (each pass claims every due webhook and delivers all of its changes so far), not
   * one after another for as long as the burst lasts.
   */
  start(logger: Logger, intervalMs = 1_000, spacingMs = 100): () => void {
    let running: Promise<unknown> | null = null;
    let again = false;
    let lastStart = Number.NEGATIVE_INFINITY;
    let spaced: NodeJS.Timeout | undefined;
    const run = () => {
      if (running) {
        again = true;
        return;
      }
      const wait = lastStart + spacingMs - performance.now();
      if (wait > 0) {
        spaced ??= setTimeout(() => {
          spaced = undefined;
          run();
        }, wait);
        return;
      }
      lastStart = performance.now();
      running = this.runOnce()
        .catch((error: unknown) => logger.warn({ err: error }, 'webhook delivery run failed'))
        .finally(() => {
          running = null;
          if (again) {
            again = false;
            run();
          }
        });
    };
    this.#deps.changes.on('committed', run);
    const timer = setInterval(run, intervalMs);
    timer.unref();
    return () => {
      clearInterval(timer);
      clearTimeout(spaced);
      this.#deps.changes.off('committed', run);
    };
  }

  async #advance(webhook: Webhook): Promise<number> {
    const { db } = this.#deps;
    const bookkeeping = this.#bookkeeping;
    const environment = await environmentOf(db, webhook);
    const glob = compilePathGlob(webhook.secretPath);
    const changes = await listProjectChangesAfter(db, webhook.projectId, Number(webhook.cursorRevision), this.#limits.changesPerRun);
    let cursor = Number(webhook.cursorRevision);
    let attempts = 0;
    for (const change of changes) {
      if (!delivered(change, webhook, glob)) {
        cursor = Number(change.revision);
        continue;
      }
      attempts++;
      const result = await this.#deliver(webhook, environment.slug, change);
      const logged = await insertDelivery(bookkeeping, {
        webhookId: webhook.id,
        revision: Number(change.revision),
        attempt: webhook.consecutiveFailures + 1,
        status: result.ok ? 'delivered' : 'failed',
        responseStatus: result.status,
        error: result.error,
      });
      // deleted while it was delivered: nothing of it is left to advance (the other webhooks of the pass go on)
      if (!logged) return attempts;
      if (!result.ok) return attempts + (await this.#failed(webhook, cursor, result.error ?? 'failed'));
      cursor = Number(change.revision);
      const moved = await updateWebhook(bookkeeping, webhook.id, { cursorRevision: cursor, consecutiveFailures: 0, lastStatus: 'success', lastRunErrorMessage: null });
      if (!moved) return attempts;
      webhook = moved;
    }
    // more may wait past this run's share: due again now; otherwise woken by the next change
    await updateWebhook(bookkeeping, webhook.id, { cursorRevision: cursor, leaseUntil: null, nextAttemptAt: new Date(this.#clock.now()) });
    return attempts;
  }

  async #deliver(webhook: Webhook, environment: string, change: ChangeRecord) {
    const project = await this.#deps.lookups.requireProject(this.#deps.db, { id: webhook.projectId });
    const payload = {
      event: 'secrets.modified',
      project: { workspaceId: webhook.projectId, environment, secretPath: change.secretPath },
      revision: Number(change.revision),
      kind: change.kind,
    };
    return postSigned(this.#deps, this.#outbound, webhook, project, payload, this.#clock.now());
  }

  /** A failed delivery: retried after a backoff from the same cursor; disabled (and audited) after maxFailures in a row. */
  async #failed(webhook: Webhook, cursor: number, error: string): Promise<number> {
    const failures = webhook.consecutiveFailures + 1;
    const delay = retryDelay(failures, this.#limits.backoffMs, this.#limits.maxBackoffMs);
    const progress = { cursorRevision: cursor, consecutiveFailures: failures, lastStatus: 'failed' as const, lastRunErrorMessage: error, leaseUntil: null };
    if (failures < this.#limits.maxFailures) {
      await updateWebhook(this.#bookkeeping, webhook.id, { ...progress, nextAttemptAt: new Date(this.#clock.now() + delay) });
      return 0;
    }
    await this.#deps.unitOfWork.write(DISPATCHER_ORIGIN, async (tx) => {
      tx.authorizedBy('a webhook failing maxFailures deliveries in a row is disabled by the dispatcher');
      const disabled = await updateWebhook(tx.db, webhook.id, { ...progress, isDisabled: true });
      if (!disabled) return;
      const project = await tx.project({ id: webhook.projectId });
      tx.audit({
        project,
        type: 'update-webhook-status',
        metadata: { ...webhookAudit(disabled, await environmentOf(tx.db, disabled)), isDisabled: true, reason: `${failures} failed deliveries in a row` },
      });
    });
    return 0;
  }
}

function delivered(change: ChangeRecord, webhook: Webhook, glob: { matches(path: string): boolean }): boolean {
  return DELIVERED_KINDS.has(change.kind) && change.environmentId === webhook.environmentId && change.secretPath !== null && glob.matches(change.secretPath);
}
