import type { Executor } from '../db/database.ts';
import type { Secret } from '../db/schema.ts';
import { listImportsOfFolders } from '../imports/import-store.ts';
import type { SharedSecretsCache } from './shared-secrets-cache.ts';

export const MAX_IMPORT_DEPTH = 10;

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
  readonly #db: Executor;
  readonly #cache: SharedSecretsCache;

  constructor(db: Executor, cache: SharedSecretsCache) {
    this.#db = db;
    this.#cache = cache;
  }

  /** The imports of `folderId` in position order (the last one wins among them). */
  async importsOf(folderId: string, origin: { environmentId: string; path: string }): Promise<ResolvedImport[]> {
    const chain = new Set([`${origin.environmentId}:${origin.path}`]);
    const imports = await listImportsOfFolders(this.#db, [folderId]);
    const resolved: ResolvedImport[] = [];
    for (const entry of imports) {
      if (entry.isReplication) continue;
      const environment = { id: entry.importEnvId, slug: entry.importEnvSlug };
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
      const nested = (await listImportsOfFolders(this.#db, [source.folderId])).filter((entry) => !entry.isReplication).reverse();
      const nextChain = new Set([...chain, id]);
      for (const entry of nested) {
        collected.push(...(await this.#secretsOf({ id: entry.importEnvId, slug: entry.importEnvSlug }, entry.importPath, depth + 1, nextChain)));
      }
    }
    const seen = new Set<string>();
    return collected.filter((secret) => !seen.has(secret.key) && seen.add(secret.key));
  }
}
