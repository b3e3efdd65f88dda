import type { Actor } from '../actor/actor.ts';
import type { Environment, Project } from '../db/schema.ts';
import { findEnvironmentBySlug } from '../environments/environment-lookup.ts';
import { AppError } from '../errors.ts';
import { formatSecretPath, isValidFolderName, MAX_PATH_DEPTH } from '../folders/secret-path.ts';
import type { ServiceDeps } from '../services/deps.ts';
import type { WriteContext } from '../services/unit-of-work.ts';
import type { SharedSecretsCache } from './shared-secrets-cache.ts';
import type { ReadOnlyDb } from '../db/database.ts';

/** `${KEY}` (same folder) or `${env.folder.sub.KEY}` (another environment and path). */
const REFERENCE = /\$\{([^{}\s]+)\}/g;
export const MAX_REFERENCE_DEPTH = 10;
/** The longest one value may grow to by expansion (characters). */
export const MAX_EXPANDED_VALUE_LENGTH = 2 * 1024 * 1024;
/** Characters one request's expansions may produce in all (each substitution's text counts). */
export const MAX_EXPANDED_TOTAL_LENGTH = 32 * 1024 * 1024;
/** References one request may substitute, nested ones included: values that reference each other repeatedly multiply. */
export const MAX_REFERENCE_SUBSTITUTIONS = 50_000;

function expansionTooLarge(key: string | undefined, why: string): AppError {
  return new AppError(
    422,
    'ReferenceExpansionTooLarge',
    `Expanding the references of ${key ? `secret '${key}'` : 'a secret'} ${why}; read it without expandSecretReferences`,
  );
}

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
export async function assertReferencesReadable(tx: WriteContext, scope: { project: Project }, values: string[]): Promise<void> {
  const external = values.flatMap(parseReferences).filter((reference) => reference.environment !== null);
  if (external.length === 0) return;
  const permission = await tx.permissionsIn(scope.project);
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
  readonly #db: ReadOnlyDb;
  readonly #actor: Actor;
  readonly #project: Project;
  readonly #cache: SharedSecretsCache;
  /** Where each `env.path` of a reference points (or null), resolved and permission-checked once per request. */
  readonly #targets = new Map<string, Promise<Origin | null>>();
  #substitutions = 0;
  #produced = 0;

  constructor(deps: ServiceDeps, db: ReadOnlyDb, actor: Actor, project: Project, cache: SharedSecretsCache) {
    this.#deps = deps;
    this.#db = db;
    this.#actor = actor;
    this.#project = project;
    this.#cache = cache;
  }

  /** `selfKey` is the key of the secret holding `value`, so that it cannot expand itself. */
  expand(value: string, origin: Origin, selfKey?: string): Promise<string> {
    const chain = new Set(selfKey === undefined ? [] : [`${origin.environment.id}:${origin.path}:${selfKey}`]);
    return this.#expand(value, origin, 0, chain, selfKey);
  }

  /**
   * Work is bounded per request: at most MAX_REFERENCE_SUBSTITUTIONS
   * substitutions producing MAX_EXPANDED_TOTAL_LENGTH characters, and
   * MAX_EXPANDED_VALUE_LENGTH characters per value; past any of them the
   * request is refused (422) rather than left to grow.
   */
  async #expand(value: string, origin: Origin, depth: number, chain: Set<string>, key: string | undefined): Promise<string> {
    if (depth >= MAX_REFERENCE_DEPTH || !value.includes('${')) return value;
    let result = value;
    for (const reference of parseReferences(value)) {
      if (++this.#substitutions > MAX_REFERENCE_SUBSTITUTIONS) {
        throw expansionTooLarge(key, `would substitute more than ${MAX_REFERENCE_SUBSTITUTIONS} references in one request`);
      }
      const target = await this.#cachedTarget(reference, origin);
      const id = target && `${target.environment.id}:${target.path}:${reference.key}`;
      let replacement = '';
      if (target && id && !chain.has(id)) {
        const raw = (await this.#cache.get(target.environment, target.path)).values.get(reference.key);
        if (raw !== undefined) replacement = await this.#expand(raw, target, depth + 1, new Set([...chain, id]), key);
      }
      this.#produced += replacement.length;
      if (this.#produced > MAX_EXPANDED_TOTAL_LENGTH) {
        throw expansionTooLarge(key, `would produce more than ${MAX_EXPANDED_TOTAL_LENGTH} characters in one request`);
      }
      if (result.length - reference.text.length + replacement.length > MAX_EXPANDED_VALUE_LENGTH) {
        throw expansionTooLarge(key, `would make a value longer than ${MAX_EXPANDED_VALUE_LENGTH} characters`);
      }
      result = result.replace(reference.text, () => replacement);
    }
    return result;
  }

  #cachedTarget(reference: Reference, origin: Origin): Promise<Origin | null> {
    if (reference.environment === null) return Promise.resolve(origin);
    const key = `${reference.environment}:${reference.path}`;
    let target = this.#targets.get(key);
    if (!target) {
      target = this.#target(reference, origin);
      this.#targets.set(key, target);
    }
    return target;
  }

  async #target(reference: Reference, origin: Origin): Promise<Origin | null> {
    if (reference.environment === null) return origin;
    const segments = reference.path!.split('/').filter(Boolean);
    if (segments.length > MAX_PATH_DEPTH || !segments.every(isValidFolderName)) return null;
    const environment = await findEnvironmentBySlug(this.#db, this.#project.id, reference.environment);
    if (!environment) return null;
    const where = { environment: environment.slug, secretPath: reference.path! };
    await this.#deps.permissions.assertProject({ actor: this.#actor, project: this.#project, action: 'read', subject: 'secrets', where, db: this.#db });
    return { environment, path: reference.path! };
  }
}
