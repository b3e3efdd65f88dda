import type { CacheVersions } from '../caches/cache-versions.ts';
import { VersionedCache } from '../caches/versioned-cache.ts';
import { listPolicies } from '../approvals/approval-store.ts';
import { type ClaimWithGrants, findClaimWithGrants, type Place } from '../grants/grant-store.ts';
import type { Environment, Folder, Project, SecretApprovalPolicy } from '../db/schema.ts';
import { listEnvironments, requireEnvironment } from '../environments/environment-lookup.ts';
import { requireFolder } from '../folders/folder-lookup.ts';
import { type ProjectReference, projectCacheKey, requireProject } from '../projects/project-lookup.ts';
import type { ReadOnlyDb } from '../db/database.ts';

/** A SecretsProject as its claim names it. */
type Claimant = Place & { name: string; uid: string };

/**
 * Projects, environments, folders and approval policies as every request (or write) looks them up: through
 * their owners' lookups, kept by version outside transactions (caches/README.md).
 * Inside a transaction they are always read from it.
 */
export class Lookups {
  readonly #projects: VersionedCache<Project> | undefined;
  readonly #environments: VersionedCache<Environment> | undefined;
  readonly #environmentLists: VersionedCache<readonly Environment[]> | undefined;
  readonly #folders: VersionedCache<Folder> | undefined;
  readonly #approvalPolicies: VersionedCache<readonly SecretApprovalPolicy[]> | undefined;
  readonly #claims: VersionedCache<ClaimWithGrants | undefined> | undefined;

  /** Without `versions` nothing is cached. */
  constructor(versions?: CacheVersions) {
    if (!versions) return;
    this.#projects = new VersionedCache(versions, 'projects');
    this.#environments = new VersionedCache(versions, 'environments');
    this.#environmentLists = new VersionedCache(versions, 'environments');
    this.#folders = new VersionedCache(versions, 'folders');
    this.#approvalPolicies = new VersionedCache(versions, 'approvalPolicies');
    this.#claims = new VersionedCache(versions, 'projectClaims');
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

  /** The project's environments, in position order (an unknown project has none). */
  listEnvironments(db: ReadOnlyDb, projectId: string): Promise<readonly Environment[]> {
    const load = () => listEnvironments(db, projectId);
    if (!this.#environmentLists) return load();
    return this.#environmentLists.get(db, projectId, async () => ({ value: await load() }));
  }

  /** The folder at `path` (normalised) in the environment; 404 when missing. */
  requireFolder(db: ReadOnlyDb, environment: { id: string; slug: string }, path: string): Promise<Folder> {
    const load = () => requireFolder(db, environment, path);
    if (!this.#folders) return load();
    return this.#folders.get(db, `${environment.id}:${path}`, async () => ({ value: await load() }));
  }

  /** The claim `declaring` holds (none: undefined), with the grants of its own namespace and of `using` (grants/grant-store.ts). */
  claimWithGrants(db: ReadOnlyDb, orgId: string, declaring: Claimant, using: Place): Promise<ClaimWithGrants | undefined> {
    const load = () => findClaimWithGrants(db, orgId, declaring, using);
    if (!this.#claims) return load();
    const key = JSON.stringify([orgId, declaring.cluster, declaring.namespace, declaring.name, declaring.uid, using.cluster, using.namespace]);
    return this.#claims.get(db, key, async () => ({ value: await load() }));
  }

  /** The environment's approval policies, oldest first. */
  approvalPolicies(db: ReadOnlyDb, projectId: string, environmentId: string): Promise<readonly SecretApprovalPolicy[]> {
    const load = () => listPolicies(db, projectId, environmentId);
    if (!this.#approvalPolicies) return load();
    return this.#approvalPolicies.get(db, `${projectId}:${environmentId}`, async () => ({ value: await load() }));
  }
}
