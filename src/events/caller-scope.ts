import type { Actor } from '../actor/actor.ts';
import type { ChangeRecord } from '../changes/change-feed.ts';
import { AppError } from '../errors.ts';
import type { PermissionSet } from '../permissions/permission-service.ts';
import type { ServiceDeps } from '../services/deps.ts';

/** Projects whose permissions one scope keeps at most; more and it starts again (they reload as changes come). */
const MAX_PROJECTS = 10_000;
/** A refresh (a stream's periodic recheck) reloads what was loaded longer ago than this; the caller's other streams recheck too. */
const REFRESH_AFTER_MS = 5_000;

interface Known {
  /** What the caller may do there; null: nothing (not a member, another organization, gone). */
  permission: PermissionSet | null;
  loadedAt: number;
}

/**
 * Which changes one caller may see: those of the projects it may read, where
 * it may read (environment and secret path), held per project so that a
 * change costs no query. One scope serves every stream of the caller
 * (ChangeStreamService shares it), so a change costs one permission load per
 * caller and project however many streams the caller holds.
 *
 * A project's permissions are read once, when its first change arrives, and
 * again after any write in this process that may change access (memberships,
 * roles, privileges), when a temporary grant starts or ends, and at refresh()
 * (the streams' periodic recheck: how late access changed through another
 * replica is seen).
 */
export class CallerScope {
  readonly #deps: ServiceDeps;
  #actor: Actor;
  readonly #projects = new Map<string, Known>();
  readonly #loading = new Map<string, Promise<PermissionSet | null>>();
  #accessVersion: number;

  constructor(deps: ServiceDeps, actor: Actor) {
    this.#deps = deps;
    this.#actor = actor;
    this.#accessVersion = deps.permissions.accessVersion;
  }

  /**
   * For the fan-out, synchronously: false only for a change known to be out of
   * scope; a change of a project not (or no longer) known passes, for filter().
   */
  mayAccept(change: ChangeRecord): boolean {
    if (this.#deps.permissions.accessVersion !== this.#accessVersion) return true;
    const known = this.#projects.get(change.projectId);
    if (known === undefined || (known.permission !== null && known.permission.validUntil <= Date.now())) return true;
    return known.permission !== null && allows(known.permission, change);
  }

  /** The changes the caller may see, in order; reads the permissions of projects not known yet. */
  async filter(changes: ChangeRecord[]): Promise<ChangeRecord[]> {
    this.#forgetIfAccessChanged();
    const visible: ChangeRecord[] = [];
    for (const change of changes) {
      const permission = await this.#permissionFor(change.projectId);
      // a deleted project: whoever could read it (as last known) hears of it, nobody else
      if (change.kind === 'project-deleted' ? permission !== null : permission !== null && allows(permission, change)) visible.push(change);
    }
    return visible;
  }

  /** The caller as its token now says (org role, revoked access): its projects are read again. */
  refresh(actor: Actor): void {
    this.#actor = actor;
    const before = Date.now() - REFRESH_AFTER_MS;
    for (const [projectId, known] of this.#projects) if (known.loadedAt <= before) this.#projects.delete(projectId);
  }

  /** Whether the caller may still read anything in the project (403/404 otherwise). */
  assertReadable(actor: Actor, projectId: string): Promise<void> {
    return CallerScope.assertReadable(this.#deps, actor, projectId);
  }

  /** Whether the caller may read anything in the project (403 otherwise); for a stream narrowed to one project. */
  static async assertReadable(deps: ServiceDeps, actor: Actor, projectId: string): Promise<void> {
    const project = await deps.lookups.requireProject(deps.db, { id: projectId });
    const permission = await deps.permissions.forProject(actor, project);
    permission.assert('read', 'secrets');
  }

  #forgetIfAccessChanged(): void {
    const version = this.#deps.permissions.accessVersion;
    if (version === this.#accessVersion && this.#projects.size < MAX_PROJECTS) return;
    this.#accessVersion = version;
    this.#projects.clear();
  }

  async #permissionFor(projectId: string): Promise<PermissionSet | null> {
    const known = this.#projects.get(projectId);
    if (known && (known.permission === null || known.permission.validUntil > Date.now())) return known.permission;
    let loading = this.#loading.get(projectId);
    if (!loading) {
      const version = this.#accessVersion;
      loading = this.#load(projectId).finally(() => this.#loading.delete(projectId));
      this.#loading.set(projectId, loading);
      void loading.then(
        (permission) => version === this.#accessVersion && this.#projects.set(projectId, { permission, loadedAt: Date.now() }),
        () => undefined,
      );
    }
    return loading;
  }

  /** The caller's permissions in the project; null when it has none there or the project is gone. */
  async #load(projectId: string): Promise<PermissionSet | null> {
    const { db, lookups, permissions } = this.#deps;
    try {
      const project = await lookups.requireProject(db, { id: projectId });
      return await permissions.forProject(this.#actor, project);
    } catch (error) {
      if (error instanceof AppError && (error.statusCode === 403 || error.statusCode === 404)) return null;
      throw error;
    }
  }
}

/** A change at a place (environment, path) needs read on the secrets there; one of the whole project, read on some of its secrets. */
function allows(permission: PermissionSet, change: ChangeRecord): boolean {
  if (change.environmentSlug === null) return permission.can('read', 'secrets');
  return permission.can('read', 'secrets', { environment: change.environmentSlug, secretPath: change.secretPath ?? '/' });
}
