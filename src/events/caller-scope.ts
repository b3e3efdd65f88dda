import type { Actor } from '../actor/actor.ts';
import type { ChangeRecord } from '../changes/change-feed.ts';
import { AppError } from '../errors.ts';
import type { PermissionSet } from '../permissions/permission-service.ts';
import type { ServiceDeps } from '../services/deps.ts';

/** Projects whose permissions one stream keeps at most; more and it starts again (they reload as changes come). */
const MAX_PROJECTS = 10_000;

/**
 * Which changes one long-lived subscriber may see: those of the projects its
 * caller may read, where it may read (environment and secret path), held per
 * project for the life of the stream so that a change costs no query.
 *
 * A project's permissions are read once, when its first change arrives, and
 * again after any write in this process that may change access (memberships,
 * roles, privileges), when a temporary grant starts or ends, and at refresh()
 * (the stream's periodic recheck: how late access changed through another
 * replica is seen).
 */
export class CallerScope {
  readonly #deps: ServiceDeps;
  readonly #onlyProject: string | undefined;
  #actor: Actor;
  /** projectId → what the caller may do there; null: nothing (not a member, another organization, gone). */
  readonly #projects = new Map<string, PermissionSet | null>();
  #accessVersion: number;

  constructor(deps: ServiceDeps, actor: Actor, onlyProject?: string) {
    this.#deps = deps;
    this.#actor = actor;
    this.#onlyProject = onlyProject;
    this.#accessVersion = deps.permissions.accessVersion;
  }

  /**
   * For the fan-out, synchronously: false only for a change known to be out of
   * scope; a change of a project not (or no longer) known passes, for filter().
   */
  mayAccept(change: ChangeRecord): boolean {
    if (this.#onlyProject !== undefined && change.projectId !== this.#onlyProject) return false;
    if (this.#deps.permissions.accessVersion !== this.#accessVersion) return true;
    const permission = this.#projects.get(change.projectId);
    if (permission === undefined || (permission !== null && permission.validUntil <= Date.now())) return true;
    return permission !== null && allows(permission, change);
  }

  /** The changes the caller may see, in order; reads the permissions of projects not known yet. */
  async filter(changes: ChangeRecord[]): Promise<ChangeRecord[]> {
    this.#forgetIfAccessChanged();
    const visible: ChangeRecord[] = [];
    for (const change of changes) {
      if (this.#onlyProject !== undefined && change.projectId !== this.#onlyProject) continue;
      if (change.kind === 'project-deleted') {
        // the project is gone: whoever could read it before hears of it, nobody else
        const permission = this.#projects.get(change.projectId) ?? (await this.#load(change.projectId));
        this.#projects.delete(change.projectId);
        if (permission) visible.push(change);
        continue;
      }
      const permission = await this.#permissionFor(change.projectId);
      if (permission && allows(permission, change)) visible.push(change);
    }
    return visible;
  }

  /** The caller as its token now says (org role, revoked access): every project is read again. */
  refresh(actor: Actor): void {
    this.#actor = actor;
    this.#projects.clear();
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
    if (known === null || (known && known.validUntil > Date.now())) return known;
    const permission = await this.#load(projectId);
    this.#projects.set(projectId, permission);
    return permission;
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
