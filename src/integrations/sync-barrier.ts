import type { Actor } from '../actor/actor.ts';
import { type ChangeRecord, LISTING_METADATA_KINDS } from '../changes/change-feed.ts';
import { changeTouches } from '../changes/read-places.ts';
import { readPlacesOf, resourceOf } from './managed-record.ts';
import { CallerQuota, HELD_REQUEST_LIMITS, type HeldRequestLimit } from '../actor/caller-quota.ts';
import { ForbiddenError, NotFoundError } from '../errors.ts';
import type { ServiceDeps } from '../services/deps.ts';
import { BarrierWatch } from './barrier-watch.ts';
import { type IntegrationRow, listManagedIntegrationsOfProject } from './integration-store.ts';
import type { SyncProgress } from './sync-progress.ts';
import type { WorkloadRef } from './workload-rollout.ts';

export type BarrierState = 'reached' | 'pending' | 'paused';

export interface BarrierIntegration {
  id: string;
  cluster: string;
  namespace: string;
  name: string;
  secretName: string | null;
  syncedRevision: number | null;
  reloadedRevision: number | null;
  state: BarrierState;
  /** Whether the write changes what it reads: one it does not concern is `reached` whatever it reflects (not sent over HTTP). */
  concerned: boolean;
  /** Whether its last sync succeeded (null before the first): a pending one whose last sync failed is failing, not slow. */
  isSynced: boolean | null;
  /** The record's last sync message (status text, never a value). */
  message: string | null;
  /** The workloads its reload rolls whose rollout had not finished at its operator's last report (names only; not waited for here). */
  rolling: WorkloadRef[];
}

export interface BarrierAnswer {
  revision: number;
  reached: boolean;
  integrations: BarrierIntegration[];
}

/**
 * The revision barrier: waits until every Integration that reads what a
 * write changed reflects it. The write is named by its revision (the
 * Coffer-Revision header); its changes are all those its transaction
 * recorded. An Integration is pending while one of them touches what it
 * reads (the operator's own routing rule, changes/read-places.ts) and the
 * revision it last synced is older; one that rolls workloads also needs its
 * reload there. Paused ones are listed and not waited for. Wakes on the
 * operators' progress notifications (sync-progress.ts), never by a query per
 * change or per wait: the waits of one project share one read per
 * notification (barrier-watch.ts). A wait ends when its client goes.
 */
export class SyncBarrier {
  readonly #deps: ServiceDeps;
  readonly #watch: BarrierWatch;
  readonly #waits: CallerQuota;

  constructor(deps: ServiceDeps, progress: SyncProgress, limit: HeldRequestLimit = HELD_REQUEST_LIMITS.revisionWaits) {
    this.#deps = deps;
    this.#watch = new BarrierWatch(deps.db, progress);
    this.#waits = new CallerQuota(limit, { noun: 'waits', remedy: 'let one answer first' });
  }

  /** Answers once the write reached every Integration it concerns, at `timeoutMs` at the latest, or at once (unanswered) when `signal` aborts. */
  async wait(actor: Actor, revision: number, timeoutMs: number, signal?: AbortSignal): Promise<BarrierAnswer> {
    const deadline = Date.now() + timeoutMs;
    const release = this.#waits.take(actor, deadline);
    try {
      const written = await this.#readableWrite(actor, revision);
      const gone: BarrierAnswer = { revision, reached: false, integrations: [] };
      return await this.#watch.until(
        written.projectId,
        (rows) => {
          const answer = answerOf(rows, written, revision);
          return { done: answer.reached, value: answer };
        },
        { deadline, signal, gone },
      );
    } finally {
      release();
    }
  }

  /** Where the Integrations of the write's project stand for `revision`, now. */
  async check(written: WrittenChanges, revision: number): Promise<BarrierAnswer> {
    return answerOf(await listManagedIntegrationsOfProject(this.#deps.db, written.projectId), written, revision);
  }

  /** 404 unless the caller may (still) wait for `revision`: a held wait checks it again when access may have ended. */
  async assertMayWait(actor: Actor, revision: number): Promise<void> {
    await this.#readableWrite(actor, revision);
  }

  /** The changes of the write that committed `revision`, if the caller may read its project's integrations; 404 alike when there is none and when it may not. */
  async #readableWrite(actor: Actor, revision: number): Promise<WrittenChanges> {
    const { db, changes, lookups, permissions } = this.#deps;
    const unknown = () => new NotFoundError(`No change with revision ${revision} that you may see`);
    const committed = await changes.changesCommittedWith(db, revision);
    const projectId = committed.find((change) => change.revision === revision)?.projectId;
    if (!projectId) throw unknown();
    const project = await lookups.requireProject(db, { id: projectId }).catch((error: unknown) => {
      if (error instanceof NotFoundError) return undefined;
      throw error;
    });
    if (!project || project.orgId !== actor.orgId) throw unknown();
    const permission = await permissions.forProject(actor, project).catch((error: unknown) => {
      if (error instanceof ForbiddenError || error instanceof NotFoundError) return undefined;
      throw error;
    });
    if (!permission?.can('read', 'integrations')) throw unknown();
    // a write changes one project; what does not alter secrets (tags, integration records, grants) reaches no Secret
    return { projectId, changes: committed.filter((change) => change.projectId === projectId && !LISTING_METADATA_KINDS.has(change.kind)) };
  }
}

/** What one write changed: its project, and the changes that can alter what a place resolves to. */
export interface WrittenChanges {
  projectId: string;
  changes: ChangeRecord[];
}

function answerOf(rows: IntegrationRow[], written: WrittenChanges, revision: number): BarrierAnswer {
  const integrations = rows.map((row) => toBarrierIntegration(row, revision, written.changes));
  return { revision, reached: integrations.every((integration) => integration.state !== 'pending'), integrations };
}

function toBarrierIntegration(row: IntegrationRow, revision: number, written: readonly ChangeRecord[]): BarrierIntegration {
  const places = readPlacesOf(row);
  const concerned = written.some((change) => changeTouches(row.projectId, places, change));
  return {
    ...resourceOf(row),
    syncedRevision: row.syncedRevision,
    reloadedRevision: row.reloadedRevision,
    state: stateOf(row, revision, concerned),
    concerned,
    isSynced: row.isSynced,
    message: row.syncMessage,
    rolling: row.reloads ? ((row.rollingWorkloads as WorkloadRef[] | null) ?? []) : [],
  };
}

function stateOf(row: IntegrationRow, revision: number, concerned: boolean): BarrierState {
  if (!row.isActive) return 'paused';
  if (!concerned) return 'reached';
  if ((row.syncedRevision ?? 0) < revision) return 'pending';
  if (row.reloads && (row.reloadedRevision ?? 0) < revision) return 'pending';
  return 'reached';
}
