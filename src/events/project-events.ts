import type { Actor } from '../actor/actor.ts';
import { CallerQuota, HELD_REQUEST_LIMITS, type HeldRequestLimit } from '../actor/caller-quota.ts';
import type { ChangeKind, ChangeRecord } from '../changes/change-feed.ts';
import type { ChangeFanout, ChangeSubscription } from '../changes/change-fanout.ts';
import { isWithin } from '../changes/read-places.ts';
import { normalizeSecretPath } from '../folders/secret-path.ts';
import { compilePathGlob } from '../patterns/patterns.ts';
import type { PermissionSet } from '../permissions/permission-service.ts';
import type { SecretReader } from '../secrets/secret-reader.ts';
import type { ServiceDeps } from '../services/deps.ts';
import { PATH_KINDS, PlaceReadIndex, type PlaceReads, SECRET_KINDS, type SubscribedScope } from './place-reads.ts';

/** The events Infisical's project-events subscription knows. */
export const PROJECT_EVENT_NAMES = ['secret:create', 'secret:update', 'secret:delete', 'secret:import-mutation'] as const;
export type ProjectEventName = (typeof PROJECT_EVENT_NAMES)[number];

export interface EventRegistration {
  event: ProjectEventName;
  /** Only changes in this environment and under this path glob (default "/": the root folder only). */
  conditions?: { environmentSlug: string; secretPath?: string };
}

/** One server-sent event, as Infisical's backend writes it: `id`, `event: secret-manager`, JSON `data`. */
export interface ProjectEvent {
  id: string;
  event: string;
  data: string;
}

/**
 * Infisical's project-events subscription (`POST /api/v1/events/subscribe/project-events`)
 * on Coffer's change fan-out. Coffer's change log records which environment and path
 * changed, not which key or operation: every secret change reaches a subscriber as one of
 * the secret events it registered (update preferred), with `environment` and `secretPath`;
 * folder, import and environment changes as `secret:import-mutation`. A change in a folder
 * the subscribed paths read through imports or secret references also arrives, as
 * `secret:import-mutation` for the subscribed place, as the reference sends it for importers.
 *
 * Work per change is shared: which folders a subscribed place reads is computed once per
 * place and change (PlaceReadIndex), and each subscription only filters in memory.
 */
export class ProjectEventService {
  readonly #deps: ServiceDeps;
  readonly #fanout: ChangeFanout;
  readonly #places: PlaceReadIndex;
  readonly #streams: CallerQuota;

  constructor(deps: ServiceDeps, fanout: ChangeFanout, reader: SecretReader, limit: HeldRequestLimit = HELD_REQUEST_LIMITS.projectEventStreams) {
    this.#deps = deps;
    this.#fanout = fanout;
    this.#places = new PlaceReadIndex(deps, fanout, reader);
    this.#streams = new CallerQuota(limit, { noun: 'project event streams', remedy: 'close one before opening another' });
  }

  /** Checks the caller may read the project's secrets and opens a filtered subscription to its changes. */
  async subscribe(actor: Actor, projectId: string, registrations: EventRegistration[]): Promise<ProjectEventStream> {
    const project = await this.#deps.lookups.requireProject(this.#deps.db, { id: projectId });
    const permission = await this.#deps.permissions.forProject(actor, project);
    permission.assert('read', 'secrets');
    const release = this.#streams.take(actor);
    const filter = new EventFilter(project.id, registrations, permission);
    const places: PlaceReads[] = [];
    const done = () => {
      release();
      for (const place of places.splice(0)) this.#places.release(place);
    };
    let subscription: ChangeSubscription | undefined;
    try {
      subscription = await this.#fanout.subscribe({ accept: (change) => filter.mayAccept(change) });
      for (const scope of filter.scopes) places.push(await this.#places.acquire(project.id, scope));
      filter.places = places;
    } catch (error) {
      subscription?.close();
      done();
      throw error;
    }
    return new ProjectEventStream(subscription, filter, {
      refresh: async (current: Actor) => {
        filter.permission = await this.#deps.permissions.forProject(current, project);
        filter.permission.assert('read', 'secrets');
      },
      release: done,
    });
  }
}

interface StreamHooks {
  refresh: (actor: Actor) => Promise<void>;
  release: () => void;
}

/** One subscriber's stream: its changes as Infisical events; call close() when the client goes away. */
export class ProjectEventStream {
  readonly #subscription: ChangeSubscription;
  readonly #filter: EventFilter;
  readonly #hooks: StreamHooks;
  #released = false;

  constructor(subscription: ChangeSubscription, filter: EventFilter, hooks: StreamHooks) {
    this.#subscription = subscription;
    this.#filter = filter;
    this.#hooks = hooks;
  }

  /** The next events (one per event name in a batch of changes); null once the stream has ended. */
  async next(): Promise<ProjectEvent[] | null> {
    for (;;) {
      const changes = await this.#subscription.next();
      if (!changes) return null;
      if (changes.some((change) => change.kind === 'project-deleted' && change.projectId === this.#filter.projectId)) {
        this.close();
        return null;
      }
      // what the subscribed places read reflects these changes (a new import or reference, a moved folder)
      await this.#filter.settled(changes.at(-1)!.revision);
      const events = this.#filter.toEvents(changes);
      if (events.length > 0) return events;
    }
  }

  /** Re-reads the caller's permissions (after re-checking its token); throws when it may no longer read. */
  refresh(actor: Actor): Promise<void> {
    return this.#hooks.refresh(actor);
  }

  close(): void {
    this.#subscription.close();
    this.#filter.places = [];
    if (!this.#released) {
      this.#released = true;
      this.#hooks.release();
    }
  }
}

const SECRET_EVENTS: ProjectEventName[] = ['secret:update', 'secret:create', 'secret:delete'];

interface CompiledRegistration {
  event: ProjectEventName;
  environment?: string;
  matchesPath: (path: string) => boolean;
}

/** Which changes a subscriber gets, and the Infisical event each becomes. */
class EventFilter {
  readonly projectId: string;
  permission: PermissionSet;
  /** The places whose imports and references are followed (those registered for secret:import-mutation). */
  readonly scopes: SubscribedScope[];
  /** What those places read, shared with every other subscription of the same places. */
  places: PlaceReads[] = [];
  readonly #registrations: CompiledRegistration[];
  readonly #secretEvent: ProjectEventName | undefined;

  constructor(projectId: string, registrations: EventRegistration[], permission: PermissionSet) {
    this.projectId = projectId;
    this.permission = permission;
    this.#registrations = registrations.map((registration) => {
      const glob = registration.conditions ? normalizeGlob(registration.conditions.secretPath ?? '/') : undefined;
      return {
        event: registration.event,
        environment: registration.conditions?.environmentSlug,
        matchesPath: glob === undefined ? () => true : compilePathGlob(glob).matches,
      };
    });
    this.#secretEvent = SECRET_EVENTS.find((name) => registrations.some((registration) => registration.event === name));
    const scopes = new Map<string, SubscribedScope>();
    for (const registration of registrations) {
      if (registration.event !== 'secret:import-mutation' || !registration.conditions) continue;
      const scope = scopeOf(registration.conditions.environmentSlug, registration.conditions.secretPath ?? '/');
      scopes.set(JSON.stringify(scope), scope);
    }
    this.scopes = [...scopes.values()];
  }

  /**
   * For the fan-out, synchronously and without a query: the changes that may
   * become an event (a secret or path change of the project, when a place's
   * imports are followed: whether one is read through is decided once the
   * shared index has read it, in toEvents).
   */
  mayAccept(change: ChangeRecord): boolean {
    if (change.projectId !== this.projectId) return false;
    if (change.kind === 'project-deleted') return true;
    if (this.scopes.length > 0 && (SECRET_KINDS.has(change.kind) || PATH_KINDS.has(change.kind))) return true;
    return this.#direct(change) !== undefined;
  }

  /** Resolves once what the subscribed places read reflects every change up to `revision`. */
  async settled(revision: number): Promise<void> {
    for (const place of this.places) await place.settled(revision);
  }

  toEvents(changes: ChangeRecord[]): ProjectEvent[] {
    const byName = new Map<ProjectEventName, { last: ChangeRecord; places: Map<string, { environment: string; secretPath: string }> }>();
    const add = (name: ProjectEventName, change: ChangeRecord, place: { environment: string; secretPath: string }) => {
      const entry = byName.get(name) ?? { last: change, places: new Map() };
      entry.places.set(`${place.environment}\u0000${place.secretPath}`, place);
      entry.last = change;
      byName.set(name, entry);
    };
    for (const change of changes) {
      const name = this.#direct(change);
      if (name) add(name, change, { environment: change.environmentSlug!, secretPath: change.secretPath ?? '/' });
      else {
        for (const place of this.places) {
          if (this.#readThrough(place, change)) add('secret:import-mutation', change, { environment: place.scope.environment, secretPath: place.scope.path });
        }
      }
    }
    return [...byName].map(([name, { last, places }]) => toProjectEvent(name, last, [...places.values()]));
  }

  /** The event a change in a registered place becomes, when the caller may read it there. */
  #direct(change: ChangeRecord): ProjectEventName | undefined {
    const name = this.#eventOf(change.kind);
    if (!name || change.environmentSlug === null) return undefined;
    const path = change.secretPath ?? '/';
    if (!this.permission.can('read', 'secrets', { environment: change.environmentSlug, secretPath: path })) return undefined;
    const registered = this.#registrations.some(
      (registration) =>
        registration.event === name && (registration.environment === undefined || registration.environment === change.environmentSlug) && registration.matchesPath(path),
    );
    return registered ? name : undefined;
  }

  /**
   * A secret change in a folder the place reads (its own, imported or referenced), that
   * this caller may hear of: in one of the place's own folders, where it may read that
   * folder; through an import or reference, where it may read the place (the listing it
   * would make there changes, as the reference tells importers).
   */
  #readThrough(place: PlaceReads, change: ChangeRecord): boolean {
    if (!place.readsFolderOf(change)) return false;
    const { environment, path, recursive } = place.scope;
    const own = change.environmentSlug === environment && (change.secretPath === path || (recursive && isWithin(change.secretPath ?? '/', path)));
    const where = own ? { environment, secretPath: change.secretPath ?? '/' } : { environment, secretPath: path };
    return this.permission.can('read', 'secrets', where);
  }

  #eventOf(kind: ChangeKind): ProjectEventName | undefined {
    if (SECRET_KINDS.has(kind)) return this.#secretEvent;
    if (PATH_KINDS.has(kind)) return 'secret:import-mutation';
    return undefined;
  }
}

/** "/app/**" is /app and below; "/app" only /app; any other glob, everything below its static start. */
function scopeOf(environment: string, secretPath: string): SubscribedScope {
  const glob = normalizeGlob(secretPath);
  const compiled = compilePathGlob(glob);
  if (!compiled.isGlob) return { environment, path: glob, recursive: false };
  return { environment, path: normalizeSecretPath(compiled.base || '/'), recursive: true };
}

/** "/app/**" stays a glob; a plain path is normalised as secret paths are. */
function normalizeGlob(path: string): string {
  if (compilePathGlob(path).isGlob) return path.startsWith('/') || path.startsWith('!') ? path : `/${path}`;
  return normalizeSecretPath(path);
}

/**
 * The reference writes `event: secret-manager` and the whole message as `data`; its
 * documentation and the CLI read `projectType`/`eventType`, its code `type`/`event`:
 * both spellings are sent.
 */
function toProjectEvent(name: ProjectEventName, last: ChangeRecord, payload: { environment: string; secretPath: string }[]): ProjectEvent {
  const time = last.createdAt instanceof Date ? last.createdAt.toISOString() : new Date(last.createdAt).toISOString();
  const message = {
    datacontenttype: 'application/json',
    type: 'secret-manager',
    projectType: 'secret-manager',
    source: 'coffer',
    time,
    data: { specversion: 1, event: name, eventType: name, payload },
  };
  return { id: String(last.revision), event: 'secret-manager', data: JSON.stringify(message) };
}
