import type { CacheVersions } from '../caches/cache-versions.ts';
import { VersionedCache } from '../caches/versioned-cache.ts';
import { listPolicies } from '../approvals/approval-store.ts';
import type { Environment, Folder, Project, SecretApprovalPolicy } from '../db/schema.ts';
import { requireEnvironment } from '../environments/environment-lookup.ts';
import { requireFolder } from '../folders/folder-lookup.ts';
import { type ProjectReference, projectCacheKey, requireProject } from '../projects/project-lookup.ts';
import type { ReadOnlyDb } from '../db/database.ts';

/**
 * Projects, environments, folders and approval policies as every request (or write) looks them up: through
 * their owners' lookups, kept by version outside transactions (caches/README.md).
 * Inside a transaction they are always read from it.
 */
export class Lookups {
  readonly #projects: VersionedCache<Project> | undefined;
  readonly #environments: VersionedCache<Environment> | undefined;
  readonly #folders: VersionedCache<Folder> | undefined;
  readonly #approvalPolicies: VersionedCache<readonly SecretApprovalPolicy[]> | undefined;

  /** Without `versions` nothing is cached. */
  constructor(versions?: CacheVersions) {
    if (!versions) return;
    this.#projects = new VersionedCache(versions, 'projects');
    this.#environments = new VersionedCache(versions, 'environments');
    this.#folders = new VersionedCache(versions, 'folders');
    this.#approvalPolicies = new VersionedCache(versions, 'approvalPolicies');
  }

  /** The one way to get a project (projects/project-lookup.ts); 404 when missing, `lock` only inside a transaction. */
  requireProject(db: ReadOnlyDb, reference: ProjectReference, options: { lock?: boolean } = {}): Promise<Project> {
    const load = () => requireProject(db, reference, options);
    if (!this.#projects || options.lock) return load();
    return this.#projects.get(db, projectCacheKey(reference), async () => ({ value: await load() }));
  }

  /** The project's environment with this slug; 404 when missing. */
  requireEnvironment(db: ReadOnlyDb, projectId: string, slug: string): Promise<Environment> {
    const load = () => requireEnvironment(db, projectId, slug);
    if (!this.#environments) return load();
    return this.#environments.get(db, `${projectId}:${slug}`, async () => ({ value: await load() }));
  }

  /** The folder at `path` (normalised) in the environment; 404 when missing. */
  requireFolder(db: ReadOnlyDb, environment: { id: string; slug: string }, path: string): Promise<Folder> {
    const load = () => requireFolder(db, environment, path);
    if (!this.#folders) return load();
    return this.#folders.get(db, `${environment.id}:${path}`, async () => ({ value: await load() }));
  }

  /** The environment's approval policies, oldest first. */
  approvalPolicies(db: ReadOnlyDb, projectId: string, environmentId: string): Promise<readonly SecretApprovalPolicy[]> {
    const load = () => listPolicies(db, projectId, environmentId);
    if (!this.#approvalPolicies) return load();
    return this.#approvalPolicies.get(db, `${projectId}:${environmentId}`, async () => ({ value: await load() }));
  }
}
