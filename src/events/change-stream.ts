import type { Actor } from '../actor/actor.ts';
import type { ChangeRecord } from '../changes/change-feed.ts';
import type { ChangeFanout, ChangeSubscription } from '../changes/change-fanout.ts';
import { CallerQuota } from '../actor/caller-quota.ts';
import { newestReadableRevision } from '../installation/installation-view.ts';
import type { ServiceDeps } from '../services/deps.ts';
import { CallerScope } from './caller-scope.ts';

/** Change streams one caller (user or machine identity) may hold open at once. */
export const MAX_CHANGE_STREAMS_PER_CALLER = 20;

export interface ChangeStreamRequest {
  /** Resume after this revision (the last one the client had); absent: from now on. */
  since?: number;
  /** Only this project's changes. */
  projectId?: string;
}

/** One server-sent event of the change stream; `id` is always a revision the client may resume after. */
export interface ChangeStreamEvent {
  id: string;
  event: 'ready' | 'reset' | 'change' | 'ping';
  data: string;
}

/** Why a stream starts with a `reset` event. */
export const RESET_UNKNOWN_REVISION = 'unknown-revision';

/**
 * The change stream (`GET /api/v1/changes/stream`): every change-feed revision the
 * caller may read, in order, each once, resumable after any revision the log holds.
 * All streams share the process's one change subscription (ChangeFanout); what a
 * caller may read is decided in memory (CallerScope), so a change costs no query
 * per stream.
 */
export class ChangeStreamService {
  readonly #deps: ServiceDeps;
  readonly #fanout: ChangeFanout;
  readonly #streams = new CallerQuota(
    MAX_CHANGE_STREAMS_PER_CALLER,
    `At most ${MAX_CHANGE_STREAMS_PER_CALLER} change streams may be open per caller; close one before opening another.`,
  );

  constructor(deps: ServiceDeps, fanout: ChangeFanout) {
    this.#deps = deps;
    this.#fanout = fanout;
  }

  async open(actor: Actor, request: ChangeStreamRequest): Promise<ChangeStream> {
    if (request.projectId !== undefined) await CallerScope.assertReadable(this.#deps, actor, request.projectId);
    const release = this.#streams.take(actor);
    try {
      return await this.#subscribe(actor, request, release);
    } catch (error) {
      release();
      throw error;
    }
  }

  async #subscribe(actor: Actor, request: ChangeStreamRequest, release: () => void): Promise<ChangeStream> {
    const latest = await this.#deps.changes.latestRevision(this.#deps.db);
    // A revision past the log's end is not this database's (restored from a backup, another installation):
    // what the client holds cannot be brought up to date change by change.
    const reset = request.since !== undefined && request.since > latest;
    const start = request.since === undefined || reset ? latest : request.since;
    // The caller is told a revision of its own (the one it resumes after) or of what it may read, never the
    // installation's newest, which counts every project's and organization's writes (read after `latest`: see docs).
    const shown = request.since === undefined || reset ? Math.min(latest, await newestReadableRevision(this.#deps, actor, request.projectId)) : request.since;
    const scope = new CallerScope(this.#deps, actor, request.projectId);
    const subscription = await this.#fanout.subscribe({ after: start, accept: (change) => scope.mayAccept(change) });
    return new ChangeStream(subscription, scope, { start, shown, reset, release });
  }
}

/** One client's stream; call close() when it goes away. */
export class ChangeStream {
  readonly #subscription: ChangeSubscription;
  readonly #scope: CallerScope;
  readonly #release: () => void;
  /** The first event, not sent yet. */
  #opening: ChangeStreamEvent | null;
  /** The revision the client may resume after, as it is told: its own, or the newest change it was handed. */
  #shownThrough: number;
  #closed = false;

  constructor(subscription: ChangeSubscription, scope: CallerScope, start: { start: number; shown: number; reset: boolean; release: () => void }) {
    this.#subscription = subscription;
    this.#scope = scope;
    this.#release = start.release;
    this.#shownThrough = start.shown;
    const data = start.reset
      ? {
          revision: start.shown,
          reason: RESET_UNKNOWN_REVISION,
          message: "The revision to resume after is not in this server's change log: list again, then follow from this revision.",
        }
      : { revision: start.shown };
    this.#opening = { id: String(start.shown), event: start.reset ? 'reset' : 'ready', data: JSON.stringify(data) };
  }

  /** The next events; null once the stream has ended. */
  async next(): Promise<ChangeStreamEvent[] | null> {
    if (this.#opening) {
      const opening = this.#opening;
      this.#opening = null;
      return [opening];
    }
    for (;;) {
      const changes = await this.#subscription.next();
      if (!changes) return null;
      const visible = await this.#scope.filter(changes);
      if (visible.length > 0) {
        this.#shownThrough = Math.max(this.#shownThrough, visible.at(-1)!.revision);
        return visible.map(toChangeEvent);
      }
    }
  }

  /**
   * A heartbeat carrying the revision the client may resume after: the newest
   * change it was handed (or the one it started from). It does not move past
   * the changes the caller does not see: that would tell it how many others
   * write; a reconnect reads those again and hands out none of them.
   */
  heartbeat(): ChangeStreamEvent {
    return { id: String(this.#shownThrough), event: 'ping', data: JSON.stringify({ revision: this.#shownThrough }) };
  }

  /** Re-reads the caller's permissions (after its token was checked again). */
  refresh(actor: Actor): void {
    this.#scope.refresh(actor);
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#subscription.close();
    this.#release();
  }
}

function toChangeEvent(change: ChangeRecord): ChangeStreamEvent {
  const time = change.createdAt instanceof Date ? change.createdAt : new Date(change.createdAt);
  const data = {
    revision: change.revision,
    kind: change.kind,
    projectId: change.projectId,
    environmentId: change.environmentId,
    environment: change.environmentSlug,
    secretPath: change.secretPath,
    time: time.toISOString(),
  };
  return { id: String(change.revision), event: 'change', data: JSON.stringify(data) };
}
