import type { Secret } from '../db/schema.ts';
import { AppError } from '../errors.ts';
import { MAX_IMPORT_DEPTH } from '../imports/import-schema.ts';
import { listImportsOfFolders } from '../imports/import-store.ts';
import type { SharedSecretsCache } from './shared-secrets-cache.ts';
import type { ReadOnlyDb } from '../db/database.ts';

/**
 * Imports followed for one request, counted along every chain (a folder
 * reached by two chains counts twice): the import graph is acyclic and at
 * most MAX_IMPORT_DEPTH deep, but shared sources can still multiply the chains.
 */
export const MAX_IMPORTS_FOLLOWED = 1000;

type ImportEntry = Awaited<ReturnType<typeof listImportsOfFolders>>[number];

export interface ResolvedImport {
  environment: { id: string; slug: string };
  secretPath: string;
  folderId: string | null;
  /** Own secrets first, then what the source imports (last import first); first occurrence of a key wins. */
  secrets: Secret[];
}

/**
 * Resolves the imports of folders: each import yields the shared secrets of
 * its source folder followed by those the source itself imports, at most
 * MAX_IMPORT_DEPTH levels deep; a chain that comes back to a folder it has
 * already passed stops there.
 */
export class ImportResolver {
  readonly #db: ReadOnlyDb;
  readonly #cache: SharedSecretsCache;
  /** Each folder's imports, read once per request. */
  readonly #importsByFolder = new Map<string, Promise<ImportEntry[]>>();
  #followed = 0;

  constructor(db: ReadOnlyDb, cache: SharedSecretsCache) {
    this.#db = db;
    this.#cache = cache;
  }

  #importsOf(folderId: string): Promise<ImportEntry[]> {
    let imports = this.#importsByFolder.get(folderId);
    if (!imports) {
      imports = listImportsOfFolders(this.#db, [folderId]).then((entries) => entries.filter((entry) => !entry.isReplication));
      this.#importsByFolder.set(folderId, imports);
    }
    return imports;
  }

  /** Counts one more import followed; refuses the request past MAX_IMPORTS_FOLLOWED. */
  #follow(): void {
    if (++this.#followed > MAX_IMPORTS_FOLLOWED) {
      throw new AppError(
        422,
        'ImportLimitExceeded',
        `Resolving this request's imports would follow more than ${MAX_IMPORTS_FOLLOWED} imports; read fewer folders at once or import fewer shared sources`,
      );
    }
  }

  /**
   * The imports of `folderId` in position order (the last one wins among them)
   * that `readable` lets through; the others are not read at all, so nothing of
   * them (not even which folders they import) reaches the request's reads.
   */
  async importsOf(
    folderId: string,
    origin: { environmentId: string; path: string },
    readable: (source: { environment: { slug: string }; secretPath: string }) => boolean,
  ): Promise<ResolvedImport[]> {
    const chain = new Set([`${origin.environmentId}:${origin.path}`]);
    const imports = await this.#importsOf(folderId);
    const resolved: ResolvedImport[] = [];
    for (const entry of imports) {
      this.#follow();
      const environment = { id: entry.importEnvId, slug: entry.importEnvSlug };
      if (!readable({ environment, secretPath: entry.importPath })) continue;
      const source = await this.#cache.get(environment, entry.importPath);
      resolved.push({
        environment,
        secretPath: entry.importPath,
        folderId: source.folderId,
        secrets: await this.#secretsOf(environment, entry.importPath, 1, chain),
      });
    }
    return resolved;
  }

  async #secretsOf(environment: { id: string; slug: string }, path: string, depth: number, chain: Set<string>): Promise<Secret[]> {
    const id = `${environment.id}:${path}`;
    if (chain.has(id) || depth > MAX_IMPORT_DEPTH) return [];
    const source = await this.#cache.get(environment, path);
    const collected = [...source.secrets];
    if (source.folderId && depth < MAX_IMPORT_DEPTH) {
      const nested = [...(await this.#importsOf(source.folderId))].reverse();
      const nextChain = new Set([...chain, id]);
      for (const entry of nested) {
        this.#follow();
        collected.push(...(await this.#secretsOf({ id: entry.importEnvId, slug: entry.importEnvSlug }, entry.importPath, depth + 1, nextChain)));
      }
    }
    const seen = new Set<string>();
    return collected.filter((secret) => !seen.has(secret.key) && seen.add(secret.key));
  }
}
