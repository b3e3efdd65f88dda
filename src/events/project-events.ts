import type { Actor } from '../actor/actor.ts';
import type { ChangeKind, ChangeRecord } from '../changes/change-feed.ts';
import type { ChangeFanout, ChangeSubscription } from '../changes/change-fanout.ts';
import { AppError, RateLimitError } from '../errors.ts';
import { normalizeSecretPath } from '../folders/secret-path.ts';
import { compilePathGlob } from '../patterns/patterns.ts';
import type { PermissionSet } from '../permissions/permission-service.ts';
import type { SecretReader } from '../secrets/secret-reader.ts';
import type { ServiceDeps } from '../services/deps.ts';

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

/** Streams a caller may hold open per project (the reference allows 5; Infisical's operator opens one per resource). */
export const MAX_STREAMS_PER_CALLER = 50;

/**
 * Infisical's project-events subscription (`POST /api/v1/events/subscribe/project-events`)
 * on Coffer's change fan-out. Coffer's change log records which environment and path
 * changed, not which key or operation: every secret change reaches a subscriber as one of
 * the secret events it registered (update preferred), with `environment` and `secretPath`;
 * folder, import and environment changes as `secret:import-mutation`. A change in a folder
 * the subscribed paths read through imports or secret references also arrives, as
 * `secret:import-mutation` for the subscribed place, as the reference sends it for importers.
 */
export class ProjectEventService {
  readonly #deps: ServiceDeps;
  readonly #fanout: ChangeFanout;
  readonly #reader: SecretReader;
  readonly #open = new Map<string, number>();

  constructor(deps: ServiceDeps, fanout: ChangeFanout, reader: SecretReader) {
    this.#deps = deps;
    this.#fanout = fanout;
    this.#reader = reader;
  }

  /** Checks the caller may read the project's secrets and opens a filtered subscription to its changes. */
  async subscribe(actor: Actor, projectId: string, registrations: EventRegistration[]): Promise<ProjectEventStream> {
    const project = await this.#deps.lookups.requireProject(this.#deps.db, { id: projectId });
    const permission = await this.#deps.permissions.forProject(actor, project);
    permission.assert('read', 'secrets');
    const key = `${actor.kind}:${actor.id}:${project.id}`;
    const open = this.#open.get(key) ?? 0;
    if (open >= MAX_STREAMS_PER_CALLER) {
      throw new RateLimitError(`Too many active connections for project ${project.id}. Please close some connections before opening a new one.`);
    }
    this.#open.set(key, open + 1);
    const filter = new EventFilter(project.id, registrations, permission);
    let caller = actor;
    const rereadDependencies = () => this.#foldersRead(caller, project.id, filter.scopes).then((reads) => filter.setReads(reads));
    let subscription: ChangeSubscription;
    try {
      await rereadDependencies();
      subscription = await this.#fanout.subscribe({ accept: (change) => filter.accepts(change) });
    } catch (error) {
      this.#release(key);
      throw error;
    }
    return new ProjectEventStream(subscription, filter, {
      refresh: async (current: Actor) => {
        caller = current;
        filter.permission = await this.#deps.permissions.forProject(current, project);
        filter.permission.assert('read', 'secrets');
      },
      rereadDependencies,
      release: () => this.#release(key),
    });
  }

  /**
   * The folders the subscribed places read through imports and references ("<environment id>:<path>"),
   * as a listing of each would read them. A place the caller cannot list (gone, not readable) reads nothing.
   */
  async #foldersRead(actor: Actor, projectId: string, scopes: SubscribedScope[]): Promise<Set<string>> {
    const reads = new Set<string>();
    for (const scope of scopes) {
      try {
        const folders = await this.#reader.foldersRead(actor, {
          workspaceId: projectId,
          environment: scope.environment,
          secretPath: scope.path,
          recursive: scope.recursive,
          includeImports: true,
          expandSecretReferences: true,
        });
        for (const folder of folders) reads.add(folder);
      } catch (error) {
        if (!(error instanceof AppError)) throw error;
      }
    }
    return reads;
  }

  #release(key: string): void {
    const open = (this.#open.get(key) ?? 1) - 1;
    if (open > 0) this.#open.set(key, open);
    else this.#open.delete(key);
  }
}

interface StreamHooks {
  refresh: (actor: Actor) => Promise<void>;
  /** Re-reads which folders the subscribed places read through imports and references. */
  rereadDependencies: () => Promise<void>;
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
      const events = this.#filter.toEvents(changes);
      // what the subscribed places read may have changed with these (a new import or reference, a moved folder);
      // if the database cannot say now, the previous set stays and the next such change asks again
      if (this.#filter.mayChangeReads(changes)) await this.#hooks.rereadDependencies().catch(() => undefined);
      if (events.length > 0) return events;
    }
  }

  /** Re-reads the caller's permissions (after re-checking its token); throws when it may no longer read. */
  refresh(actor: Actor): Promise<void> {
    return this.#hooks.refresh(actor);
  }

  close(): void {
    this.#subscription.close();
    if (!this.#released) {
      this.#released = true;
      this.#hooks.release();
    }
  }
}

const SECRET_EVENTS: ProjectEventName[] = ['secret:update', 'secret:create', 'secret:delete'];
const SECRET_KINDS: ReadonlySet<ChangeKind> = new Set(['secret', 'tags']);
const PATH_KINDS: ReadonlySet<ChangeKind> = new Set(['folder', 'import', 'environment-created', 'environment-updated', 'environment-deleted']);

interface CompiledRegistration {
  event: ProjectEventName;
  environment?: string;
  matchesPath: (path: string) => boolean;
}

/** A place a subscriber registered for, as a listing reads it: an environment and a path (recursive for a glob). */
export interface SubscribedScope {
  environment: string;
  path: string;
  recursive: boolean;
}

/** Which changes a subscriber gets, and the Infisical event each becomes. */
class EventFilter {
  readonly projectId: string;
  permission: PermissionSet;
  /** The places whose imports and references are followed (those registered for secret:import-mutation). */
  readonly scopes: SubscribedScope[];
  readonly #registrations: CompiledRegistration[];
  readonly #secretEvent: ProjectEventName | undefined;
  /** "<environment id>:<path>" of every folder the scopes read (their own, imported, referenced). */
  #reads = new Set<string>();

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

  setReads(reads: Set<string>): void {
    this.#reads = reads;
  }

  accepts(change: ChangeRecord): boolean {
    if (change.projectId !== this.projectId) return false;
    if (change.kind === 'project-deleted') return true;
    return this.#direct(change) !== undefined || this.#readThrough(change) || this.mayChangeReads([change]);
  }

  /** Changes to folders, imports or environments may change what the scopes read, and so may any change they read. */
  mayChangeReads(changes: ChangeRecord[]): boolean {
    if (this.scopes.length === 0) return false;
    return changes.some((change) => change.projectId === this.projectId && (PATH_KINDS.has(change.kind) || this.#readThrough(change)));
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
      else if (this.#readThrough(change)) {
        for (const scope of this.scopes) add('secret:import-mutation', change, { environment: scope.environment, secretPath: scope.path });
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

  /** A secret change in a folder the scopes read through an import or a reference. */
  #readThrough(change: ChangeRecord): boolean {
    return SECRET_KINDS.has(change.kind) && change.environmentId !== null && this.#reads.has(`${change.environmentId}:${change.secretPath ?? '/'}`);
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
