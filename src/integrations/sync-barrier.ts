import type { Actor } from '../actor/actor.ts';
import { type ChangeRecord, LISTING_METADATA_KINDS } from '../changes/change-feed.ts';
import { changeTouches, type ReadPlace } from '../changes/read-places.ts';
import { CallerQuota } from '../actor/caller-quota.ts';
import { ForbiddenError, NotFoundError } from '../errors.ts';
import type { ServiceDeps } from '../services/deps.ts';
import { type IntegrationRow, listManagedIntegrationsOfProject } from './integration-store.ts';
import type { SyncProgress } from './sync-progress.ts';

export type BarrierState = 'reached' | 'pending' | 'paused';

/** Waits one caller may hold at once (each is a held request that reads the project's records on every progress notification). */
export const MAX_WAITS_PER_CALLER = 20;

export interface BarrierIntegration {
  id: string;
  cluster: string;
  namespace: string;
  name: string;
  secretName: string | null;
  syncedRevision: number | null;
  reloadedRevision: number | null;
  state: BarrierState;
  /** The record's last sync message (status text, never a value). */
  message: string | null;
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
 * operators' progress notifications (sync-progress.ts), never by a query per change.
 */
export class SyncBarrier {
  readonly #deps: ServiceDeps;
  readonly #progress: SyncProgress;
  readonly #waits = new CallerQuota(MAX_WAITS_PER_CALLER, `At most ${MAX_WAITS_PER_CALLER} waits may be under way per caller; let one answer first.`);

  constructor(deps: ServiceDeps, progress: SyncProgress) {
    this.#deps = deps;
    this.#progress = progress;
  }

  async wait(actor: Actor, revision: number, timeoutMs: number): Promise<BarrierAnswer> {
    const release = this.#waits.take(actor);
    try {
      return await this.#wait(actor, revision, timeoutMs);
    } finally {
      release();
    }
  }

  async #wait(actor: Actor, revision: number, timeoutMs: number): Promise<BarrierAnswer> {
    const written = await this.#readableWrite(actor, revision);
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const answer = await this.check(written, revision);
      const left = deadline - Date.now();
      if (answer.reached || left <= 0) return answer;
      await this.#progress.next(left);
    }
  }

  /** Where the Integrations of the write's project stand for `revision`, now. */
  async check(written: WrittenChanges, revision: number): Promise<BarrierAnswer> {
    const rows = await listManagedIntegrationsOfProject(this.#deps.db, written.projectId);
    const integrations = rows.map((row) => toBarrierIntegration(row, stateOf(row, revision, written.changes)));
    return { revision, reached: integrations.every((integration) => integration.state !== 'pending'), integrations };
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

function stateOf(row: IntegrationRow, revision: number, written: readonly ChangeRecord[]): BarrierState {
  if (!row.isActive) return 'paused';
  // before its first sync only its own place is known
  const places = (row.readPlaces as ReadPlace[] | null) ?? [{ environmentId: row.envId, path: row.secretPath, recursive: false }];
  if (!written.some((change) => changeTouches(row.projectId, places, change))) return 'reached';
  if ((row.syncedRevision ?? 0) < revision) return 'pending';
  if (row.reloads && (row.reloadedRevision ?? 0) < revision) return 'pending';
  return 'reached';
}

function toBarrierIntegration(row: IntegrationRow, state: BarrierState): BarrierIntegration {
  const [namespace = '', name = ''] = (row.managedBy ?? '').split('/');
  return {
    id: row.id,
    cluster: row.cluster ?? '',
    namespace,
    name,
    secretName: row.app,
    syncedRevision: row.syncedRevision,
    reloadedRevision: row.reloadedRevision,
    state,
    message: row.syncMessage,
  };
}
