import type { Actor } from '../actor/actor.ts';
import { outsideCacheRequestScope } from '../caches/cache-versions.ts';
import type { ChangeKind, ChangeRecord } from '../changes/change-feed.ts';
import type { ChangeFanout } from '../changes/change-fanout.ts';
import { AppError } from '../errors.ts';
import type { SecretReader } from '../secrets/secret-reader.ts';
import type { ServiceDeps } from '../services/deps.ts';

/** A place a subscriber registered for, as a listing reads it: an environment and a path (recursive for a glob). */
export interface SubscribedScope {
  environment: string;
  path: string;
  recursive: boolean;
}

/** A failed read of a place is tried again after 0.2 s, doubling up to 5 s. */
const RETRY_FIRST_MS = 200;
const RETRY_MAX_MS = 5_000;

export const SECRET_KINDS: ReadonlySet<ChangeKind> = new Set(['secret', 'tags']);
export const PATH_KINDS: ReadonlySet<ChangeKind> = new Set(['folder', 'import', 'environment-created', 'environment-updated', 'environment-deleted']);

/** One subscribed place of a project and the folders it reads, shared by every subscription of that place. */
export class PlaceReads {
  readonly projectId: string;
  readonly scope: SubscribedScope;
  /** "<environment id>:<path>" of every folder the place reads (its own, imported, referenced). */
  folders = new Set<string>();
  /** The last read failed (the database unavailable): until one succeeds, every secret change of the project may be read through. */
  unknown = false;
  /** Delay before the next read after a failed one, and whether that read is set. */
  retryDelayMs = 0;
  retrying = false;
  /** Subscriptions using it. */
  users = 0;
  /** The newest revision that may have changed what it reads, and the newest one a finished read covers. */
  dirtyThrough = 0;
  readThrough = 0;
  reading = false;
  readonly #settled: { revision: number; resolve: () => void }[] = [];

  constructor(projectId: string, scope: SubscribedScope) {
    this.projectId = projectId;
    this.scope = scope;
  }

  /** Whether a change can change what the place reads: a folder, import or environment change, or a secret changed in a folder it reads (a new reference). */
  mayChangeReads(change: ChangeRecord): boolean {
    if (change.projectId !== this.projectId) return false;
    return PATH_KINDS.has(change.kind) || this.readsFolderOf(change);
  }

  /** A secret change in a folder the place reads. */
  readsFolderOf(change: ChangeRecord): boolean {
    if (!SECRET_KINDS.has(change.kind) || change.environmentId === null || change.projectId !== this.projectId) return false;
    return this.unknown || this.folders.has(`${change.environmentId}:${change.secretPath ?? '/'}`);
  }

  /** Resolves once what the place reads reflects every change up to `revision`. */
  settled(revision: number): Promise<void> {
    if (this.#isSettled(revision)) return Promise.resolve();
    return new Promise((resolve) => this.#settled.push({ revision, resolve }));
  }

  /** @internal after a read (or when the place is no longer used) */
  wakeSettled(all = false): void {
    for (let index = this.#settled.length - 1; index >= 0; index--) {
      const waiter = this.#settled[index]!;
      if (all || this.#isSettled(waiter.revision)) {
        this.#settled.splice(index, 1);
        waiter.resolve();
      }
    }
  }

  #isSettled(revision: number): boolean {
    return this.readThrough >= Math.min(revision, this.dirtyThrough);
  }
}

/**
 * Which folders each subscribed place reads through imports and secret
 * references, computed once per place and per change that may alter it,
 * whatever the number of subscriptions of the place (before: one full read
 * of the place per subscription and write). It reads as a caller who may read
 * the whole project would (so the set is the same for every subscriber); each
 * subscription then decides in memory whether its caller may hear of a change
 * (project-events.ts). A place that cannot be read (gone, too large to list)
 * reads nothing.
 */
export class PlaceReadIndex {
  readonly #deps: ServiceDeps;
  readonly #fanout: ChangeFanout;
  readonly #reader: SecretReader;
  /** "<project id>|<environment>|<path>|<recursive>" → the place. */
  readonly #places = new Map<string, PlaceReads>();
  #stopObserving: (() => void) | null = null;

  constructor(deps: ServiceDeps, fanout: ChangeFanout, reader: SecretReader) {
    this.#deps = deps;
    this.#fanout = fanout;
    this.#reader = reader;
  }

  /** Places tracked now. */
  get size(): number {
    return this.#places.size;
  }

  /** Takes the place for a subscription (read now if new); release it with release(). */
  async acquire(projectId: string, scope: SubscribedScope): Promise<PlaceReads> {
    const key = `${projectId}|${scope.environment}|${scope.path}|${scope.recursive}`;
    let place = this.#places.get(key);
    if (!place) {
      place = new PlaceReads(projectId, scope);
      this.#places.set(key, place);
      this.#stopObserving ??= this.#fanout.observe((changes) => this.#observe(changes));
      place.dirtyThrough = this.#fanout.position;
    }
    place.users++;
    this.#read(place);
    await place.settled(this.#fanout.position);
    return place;
  }

  release(place: PlaceReads): void {
    if (--place.users > 0) return;
    this.#places.delete(`${place.projectId}|${place.scope.environment}|${place.scope.path}|${place.scope.recursive}`);
    place.readThrough = place.dirtyThrough;
    place.wakeSettled(true);
    if (this.#places.size === 0) {
      this.#stopObserving?.();
      this.#stopObserving = null;
    }
  }

  /** Every committed change, in order, before any subscription hears of it. */
  #observe(changes: ChangeRecord[]): void {
    for (const place of this.#places.values()) {
      const last = changes.findLast((change) => place.mayChangeReads(change));
      if (!last) continue;
      place.dirtyThrough = Math.max(place.dirtyThrough, last.revision);
      this.#read(place);
    }
  }

  /**
   * Reads what the place reads; one read at a time per place, changes during it make one more. A read that fails
   * (the database unavailable or too slow) must not leave the place reading what it read before: a reference
   * written meanwhile would go unheard. Until a read succeeds the place reads through every secret change of its
   * project (more events, never fewer), and it is read again after a growing delay.
   */
  #read(place: PlaceReads): void {
    if (place.reading) return;
    place.reading = true;
    // reads for every subscriber, not for the request that set it off: never through that request's cache versions
    void outsideCacheRequestScope(async () => {
      while (place.readThrough < place.dirtyThrough && place.users > 0) {
        const through = place.dirtyThrough;
        const folders = await this.#foldersRead(place).catch(() => undefined);
        place.unknown = folders === undefined;
        if (folders) {
          place.folders = folders;
          place.retryDelayMs = 0;
        }
        place.readThrough = through;
        place.wakeSettled();
        if (place.unknown) this.#retryLater(place, through);
      }
      place.reading = false;
    });
  }

  #retryLater(place: PlaceReads, failedThrough: number): void {
    if (place.retrying) return;
    place.retrying = true;
    place.retryDelayMs = Math.min(place.retryDelayMs === 0 ? RETRY_FIRST_MS : place.retryDelayMs * 2, RETRY_MAX_MS);
    setTimeout(() => {
      place.retrying = false;
      if (!place.unknown || place.users === 0) return;
      // read again as if it had changed: what it reads now is what the next events are decided by
      place.readThrough = Math.min(place.readThrough, failedThrough - 1);
      this.#read(place);
    }, place.retryDelayMs).unref();
  }

  /** What the place reads: nothing when it cannot be read (gone, too large to list); a failure to read throws. */
  async #foldersRead(place: PlaceReads): Promise<Set<string>> {
    try {
      const project = await this.#deps.lookups.requireProject(this.#deps.db, { id: place.projectId });
      return await this.#reader.foldersRead(wholeProjectReader(project.orgId), {
        projectId: project.id,
        environment: place.scope.environment,
        secretPath: place.scope.path,
        recursive: place.scope.recursive,
        includeImports: true,
        expandSecretReferences: true,
      });
    } catch (error) {
      // the place's own answer (gone, too large to list): it reads nothing; the database's trouble is not an answer
      if (error instanceof AppError && error.statusCode < 500) return new Set();
      throw error;
    }
  }
}

/** The reader a place's folders are computed as: one that may read the whole project (an org admin of no one), never audited, never a person. */
function wholeProjectReader(orgId: string): Actor {
  return {
    kind: 'identity',
    id: '00000000-0000-0000-0000-000000000000',
    name: 'project events',
    orgId,
    orgRole: 'admin',
    tokenId: null,
    authMethod: null,
    ip: null,
    userAgent: null,
    userAgentType: 'other',
  };
}
