import picomatch from 'picomatch';
import type { Actor } from '../actor/actor.ts';
import type { ChangeKind, ChangeRecord } from '../changes/change-feed.ts';
import type { ChangeFanout, ChangeSubscription } from '../changes/change-fanout.ts';
import { RateLimitError } from '../errors.ts';
import { normalizeSecretPath } from '../folders/secret-path.ts';
import type { PermissionSet } from '../permissions/permission-service.ts';
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
 * folder, import and environment changes as `secret:import-mutation`.
 */
export class ProjectEventService {
  readonly #deps: ServiceDeps;
  readonly #fanout: ChangeFanout;
  readonly #open = new Map<string, number>();

  constructor(deps: ServiceDeps, fanout: ChangeFanout) {
    this.#deps = deps;
    this.#fanout = fanout;
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
    let subscription: ChangeSubscription;
    try {
      subscription = await this.#fanout.subscribe({ accept: (change) => filter.accepts(change) });
    } catch (error) {
      this.#release(key);
      throw error;
    }
    return new ProjectEventStream(subscription, filter, {
      refresh: async (current: Actor) => {
        filter.permission = await this.#deps.permissions.forProject(current, project);
        filter.permission.assert('read', 'secrets');
      },
      release: () => this.#release(key),
    });
  }

  #release(key: string): void {
    const open = (this.#open.get(key) ?? 1) - 1;
    if (open > 0) this.#open.set(key, open);
    else this.#open.delete(key);
  }
}

/** One subscriber's stream: its changes as Infisical events; call close() when the client goes away. */
export class ProjectEventStream {
  readonly #subscription: ChangeSubscription;
  readonly #filter: EventFilter;
  readonly #hooks: { refresh: (actor: Actor) => Promise<void>; release: () => void };
  #released = false;

  constructor(subscription: ChangeSubscription, filter: EventFilter, hooks: { refresh: (actor: Actor) => Promise<void>; release: () => void }) {
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

/** Which changes a subscriber gets, and the Infisical event each becomes. */
class EventFilter {
  readonly projectId: string;
  permission: PermissionSet;
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
        matchesPath: glob === undefined ? () => true : picomatch(glob, { dot: true }),
      };
    });
    this.#secretEvent = SECRET_EVENTS.find((name) => registrations.some((registration) => registration.event === name));
  }

  accepts(change: ChangeRecord): boolean {
    if (change.projectId !== this.projectId) return false;
    if (change.kind === 'project-deleted') return true;
    const name = this.#eventOf(change.kind);
    if (!name || change.environmentSlug === null) return false;
    const path = change.secretPath ?? '/';
    if (!this.permission.can('read', 'secrets', { environment: change.environmentSlug, secretPath: path })) return false;
    return this.#registrations.some(
      (registration) =>
        registration.event === name && (registration.environment === undefined || registration.environment === change.environmentSlug) && registration.matchesPath(path),
    );
  }

  toEvents(changes: ChangeRecord[]): ProjectEvent[] {
    const byName = new Map<ProjectEventName, { last: ChangeRecord; places: Map<string, { environment: string; secretPath: string }> }>();
    for (const change of changes) {
      const name = this.#eventOf(change.kind);
      if (!name || change.environmentSlug === null) continue;
      const entry = byName.get(name) ?? { last: change, places: new Map() };
      const place = { environment: change.environmentSlug, secretPath: change.secretPath ?? '/' };
      entry.places.set(`${place.environment}\u0000${place.secretPath}`, place);
      entry.last = change;
      byName.set(name, entry);
    }
    return [...byName].map(([name, { last, places }]) => toProjectEvent(name, last, [...places.values()]));
  }

  #eventOf(kind: ChangeKind): ProjectEventName | undefined {
    if (SECRET_KINDS.has(kind)) return this.#secretEvent;
    if (PATH_KINDS.has(kind)) return 'secret:import-mutation';
    return undefined;
  }
}

/** "/app/**" stays a glob; a plain path is normalised as secret paths are. */
function normalizeGlob(path: string): string {
  if (picomatch.scan(path).isGlob) return path.startsWith('/') ? path : `/${path}`;
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
