import type { Kysely } from 'kysely';
import type { Executor } from '../db/database.ts';
import type { DB, Environment, Folder, Project } from '../db/schema.ts';
import { WriteInvalidatedCache } from '../db/write-invalidated-cache.ts';
import type { WriteWatch } from '../db/write-watch.ts';
import { requireEnvironment } from '../environments/environment-lookup.ts';
import { requireFolder } from '../folders/folder-lookup.ts';
import { requireProject, requireProjectBySlug } from './project-lookup.ts';

/** How long a project, environment or folder row is reused by reads: a change made through another replica shows after this at most. */
export const LOOKUP_CACHE_TTL_MS = 1_000;

/**
 * Projects, environments and folders as every secret read looks them up, kept briefly
 * (dropped on any write to their tables in this process). Inside a transaction
 * they are always read from it.
 */
export class Lookups {
  readonly #db: Kysely<DB>;
  readonly #projects: WriteInvalidatedCache<Project> | undefined;
  readonly #environments: WriteInvalidatedCache<Environment> | undefined;
  readonly #folders: WriteInvalidatedCache<Folder> | undefined;

  constructor(db: Kysely<DB>, writes?: WriteWatch) {
    this.#db = db;
    const options = { ttlMs: LOOKUP_CACHE_TTL_MS, maxEntries: 10_000 };
    this.#projects = writes && new WriteInvalidatedCache(writes, ['projects'], options);
    this.#environments = writes && new WriteInvalidatedCache(writes, ['projects', 'projectEnvironments'], options);
    this.#folders = writes && new WriteInvalidatedCache(writes, ['projects', 'projectEnvironments', 'secretFolders'], options);
  }

  /** By id, or by slug within `orgId`; 404 when missing. */
  requireProject(db: Executor, reference: { id: string } | { orgId: string; slug: string }): Promise<Project> {
    const load = () => ('id' in reference ? requireProject(db, reference.id) : requireProjectBySlug(db, reference.orgId, reference.slug));
    if (!this.#projects || db !== this.#db) return load();
    const key = 'id' in reference ? `id:${reference.id}` : `slug:${reference.orgId}:${reference.slug}`;
    return this.#projects.get(key, async () => ({ value: await load() }));
  }

  /** The project's environment with this slug; 404 when missing. */
  requireEnvironment(db: Executor, projectId: string, slug: string): Promise<Environment> {
    const load = () => requireEnvironment(db, projectId, slug);
    if (!this.#environments || db !== this.#db) return load();
    return this.#environments.get(`${projectId}:${slug}`, async () => ({ value: await load() }));
  }

  /** The folder at `path` (normalised) in the environment; 404 when missing. */
  requireFolder(db: Executor, environment: { id: string; slug: string }, path: string): Promise<Folder> {
    const load = () => requireFolder(db, environment, path);
    if (!this.#folders || db !== this.#db) return load();
    return this.#folders.get(`${environment.id}:${path}`, async () => ({ value: await load() }));
  }
}
