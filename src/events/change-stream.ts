import type { Actor } from '../actor/actor.ts';
import type { ChangeRecord } from '../changes/change-feed.ts';
import type { ChangeFanout, ChangeSubscription } from '../changes/change-fanout.ts';
import { CallerQuota, HELD_REQUEST_LIMITS, type HeldRequestLimit } from '../actor/caller-quota.ts';
import { newestReadableRevision } from '../installation/installation-view.ts';
import type { ServiceDeps } from '../services/deps.ts';
import type { z } from 'zod';
import { type ChangeEvent, resetEvent, revisionEvent } from '../wire/operator-wire.ts';
import { CallerScope } from './caller-scope.ts';

export interface ChangeStreamRequest {
  /** Resume after this revision (the last one the client had); absent: from now on. */
  since?: number;
  /** Only this project's changes. */
  projectId?: string;
}

/** One server-sent event of the change stream; `id` is always a revision the client may resume after. */
export interface ChangeStreamEvent {
  id: string;
  event: 'ready' | 'reset' | 'change' | 'rotation' | 'ping';
  data: string;
}

/** Why a stream starts with a `reset` event. */
export const RESET_UNKNOWN_REVISION = 'unknown-revision';

/**
 * The change stream (`GET /api/v1/changes/stream`): every change-feed revision the
 * caller may read, in order, each once, resumable after any revision the log holds.
 * All streams share the process's one change subscription (ChangeFanout); what a
 * caller may read is decided in memory by one CallerScope per caller, shared by
 * all its streams, so a change costs no query per stream, and one permission
 * load per caller and project when it is first seen.
 */
export class ChangeStreamService {
  readonly #deps: ServiceDeps;
  readonly #fanout: ChangeFanout;
  readonly #streams: CallerQuota;
  /** One scope per caller (and org role) with streams open, and how many streams use it. */
  readonly #scopes = new Map<string, { scope: CallerScope; streams: number }>();

  constructor(deps: ServiceDeps, fanout: ChangeFanout, limit: HeldRequestLimit = HELD_REQUEST_LIMITS.changeStreams) {
    this.#deps = deps;
    this.#fanout = fanout;
    this.#streams = new CallerQuota(limit, { noun: 'change streams', remedy: 'close one before opening another' });
  }

  async open(actor: Actor, request: ChangeStreamRequest): Promise<ChangeStream> {
    if (request.projectId !== undefined) await CallerScope.assertReadable(this.#deps, actor, request.projectId);
    const release = this.#streams.take(actor);
    const scope = this.#scopeOf(actor);
    const done = () => {
      release();
      scope.release();
    };
    try {
      return await this.#subscribe(actor, request, scope.scope, done);
    } catch (error) {
      done();
      throw error;
    }
  }

  #scopeOf(actor: Actor): { scope: CallerScope; release: () => void } {
    const key = `${actor.kind}:${actor.id}:${actor.orgRole}`;
    let entry = this.#scopes.get(key);
    if (!entry) this.#scopes.set(key, (entry = { scope: new CallerScope(this.#deps, actor), streams: 0 }));
    entry.streams++;
    const shared = entry;
    return {
      scope: shared.scope,
      release: () => {
        if (--shared.streams === 0 && this.#scopes.get(key) === shared) this.#scopes.delete(key);
      },
    };
  }

  async #subscribe(actor: Actor, request: ChangeStreamRequest, scope: CallerScope, release: () => void): Promise<ChangeStream> {
    const latest = await this.#deps.changes.latestRevision(this.#deps.db);
    // A revision past the log's end is not this database's (restored from a backup, another installation):
    // what the client holds cannot be brought up to date change by change.
    const reset = request.since !== undefined && request.since > latest;
    const start = request.since === undefined || reset ? latest : request.since;
    // The caller is told a revision of its own (the one it resumes after) or of what it may read, never the
    // installation's newest, which counts every project's and organization's writes (read after `latest`: see docs).
    const shown = request.since === undefined || reset ? Math.min(latest, await newestReadableRevision(this.#deps, actor, request.projectId)) : request.since;
    const only = request.projectId;
    const subscription = await this.#fanout.subscribe({
      after: start,
      accept: (change) => (only === undefined || change.projectId === only) && scope.mayAccept(change),
    });
    return new ChangeStream(subscription, scope, { start, shown, reset, release, only });
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

  readonly #only: string | undefined;

  constructor(subscription: ChangeSubscription, scope: CallerScope, start: { start: number; shown: number; reset: boolean; release: () => void; only?: string }) {
    this.#subscription = subscription;
    this.#scope = scope;
    this.#only = start.only;
    this.#release = start.release;
    this.#shownThrough = start.shown;
    const data: z.infer<typeof resetEvent> | z.infer<typeof revisionEvent> = start.reset
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
      const visible = await this.#scope.filter(this.#only === undefined ? changes : changes.filter((change) => change.projectId === this.#only));
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
    const data: z.infer<typeof revisionEvent> = { revision: this.#shownThrough };
    return { id: String(this.#shownThrough), event: 'ping', data: JSON.stringify(data) };
  }

  /**
   * Re-reads the caller's permissions (after its token was checked again); a stream of one project throws
   * (404/403) once the caller may read nothing there, which ends it.
   */
  async refresh(actor: Actor): Promise<void> {
    this.#scope.refresh(actor);
    if (this.#only !== undefined) await this.#scope.assertReadable(actor, this.#only);
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
  const data: ChangeEvent = {
    revision: change.revision,
    kind: change.kind,
    projectId: change.projectId,
    environmentId: change.environmentId,
    environment: change.environmentSlug,
    secretPath: change.secretPath,
    time: time.toISOString(),
    ...(change.rotation ? { rotation: change.rotation } : {}),
  };
  // an event type of its own: a client that knows only `change` (an operator of an earlier release) skips it, as
  // server-sent events' clients skip any type they do not listen for, and resumes after the next ping's revision
  return { id: String(change.revision), event: change.kind === 'rotation' ? 'rotation' : 'change', data: JSON.stringify(data) };
}
