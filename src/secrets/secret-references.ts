import type { Actor } from '../actor/actor.ts';
import type { Executor } from '../db/database.ts';
import type { Environment, Project } from '../db/schema.ts';
import { findEnvironmentBySlug } from '../environments/environment-lookup.ts';
import { formatSecretPath, isValidFolderName } from '../folders/secret-path.ts';
import type { ServiceDeps } from '../services/deps.ts';
import type { SharedSecretsCache } from './shared-secrets-cache.ts';

/** `${KEY}` (same folder) or `${env.folder.sub.KEY}` (another environment and path). */
const REFERENCE = /\$\{([^{}\s]+)\}/g;
export const MAX_REFERENCE_DEPTH = 10;

interface Reference {
  text: string;
  environment: string | null;
  path: string | null;
  key: string;
}

export function parseReferences(value: string): Reference[] {
  return [...value.matchAll(REFERENCE)].map((match) => {
    const parts = match[1]!.split('.');
    if (parts.length === 1) return { text: match[0], environment: null, path: null, key: parts[0]! };
    return { text: match[0], environment: parts[0]!, path: formatSecretPath(parts.slice(1, -1)), key: parts.at(-1)! };
  });
}

/** Writing a value that references other folders needs read access to them. */
export async function assertReferencesReadable(
  deps: ServiceDeps,
  db: Executor,
  actor: Actor,
  scope: { project: Project },
  values: string[],
): Promise<void> {
  const external = values.flatMap(parseReferences).filter((reference) => reference.environment !== null);
  if (external.length === 0) return;
  const permission = await deps.permissions.forProject(actor, scope.project, db);
  for (const reference of external) {
    permission.assert('read', 'secrets', { environment: reference.environment!, secretPath: reference.path! });
  }
}

interface Origin {
  environment: Pick<Environment, 'id' | 'slug'>;
  path: string;
}

/**
 * Expands references recursively (at most MAX_REFERENCE_DEPTH levels); a
 * reference to a missing secret, or one that loops back, expands to "".
 */
export class ReferenceExpander {
  readonly #deps: ServiceDeps;
  readonly #db: Executor;
  readonly #actor: Actor;
  readonly #project: Project;
  readonly #cache: SharedSecretsCache;

  constructor(deps: ServiceDeps, db: Executor, actor: Actor, project: Project, cache: SharedSecretsCache) {
    this.#deps = deps;
    this.#db = db;
    this.#actor = actor;
    this.#project = project;
    this.#cache = cache;
  }

  /** `selfKey` is the key of the secret holding `value`, so that it cannot expand itself. */
  expand(value: string, origin: Origin, selfKey?: string): Promise<string> {
    const chain = new Set(selfKey === undefined ? [] : [`${origin.environment.id}:${origin.path}:${selfKey}`]);
    return this.#expand(value, origin, 0, chain);
  }

  async #expand(value: string, origin: Origin, depth: number, chain: Set<string>): Promise<string> {
    if (depth >= MAX_REFERENCE_DEPTH || !value.includes('${')) return value;
    let result = value;
    for (const reference of parseReferences(value)) {
      const target = await this.#target(reference, origin);
      const id = target && `${target.environment.id}:${target.path}:${reference.key}`;
      let replacement = '';
      if (target && id && !chain.has(id)) {
        const raw = (await this.#cache.get(target.environment, target.path)).values.get(reference.key);
        if (raw !== undefined) replacement = await this.#expand(raw, target, depth + 1, new Set([...chain, id]));
      }
      result = result.replace(reference.text, () => replacement);
    }
    return result;
  }

  async #target(reference: Reference, origin: Origin): Promise<Origin | null> {
    if (reference.environment === null) return origin;
    const segments = reference.path!.split('/').filter(Boolean);
    if (!segments.every(isValidFolderName)) return null;
    const environment = await findEnvironmentBySlug(this.#db, this.#project.id, reference.environment);
    if (!environment) return null;
    const conditions = { environment: environment.slug, secretPath: reference.path! };
    await this.#deps.permissions.assertProjectPermission(this.#actor, this.#project, 'read', 'secrets', conditions, this.#db);
    return { environment, path: reference.path! };
  }
}
