import type { Actor } from '../actor/actor.ts';
import type { ServiceDeps } from '../services/deps.ts';
import { type FolderRef, folderRefOf } from './folder-ref.ts';
import type { SecretReader } from './secret-reader.ts';

/** What an Integration reads: a folder of an environment, maybe with what lies below it and what it imports. */
export interface SecretSource {
  projectId: string;
  environment: string;
  path: string;
  recursive: boolean;
  includeImports: boolean;
}

export interface SourcedSecret {
  key: string;
  value: string;
  /** The folder it lives in (below the source path when recursive). */
  path: string;
  /** The slugs of its tags. */
  tags: string[];
}

export interface ImportedSecrets {
  environment: string;
  path: string;
  secrets: { key: string; value: string; tags: string[] }[];
}

/** What an operator syncs from one source. */
export interface OperatorListing {
  /** Shared secrets (never a user's personal ones), references expanded. */
  secrets: SourcedSecret[];
  /** Imported groups in position order. */
  imports: ImportedSecrets[];
  /** The source environment's id. */
  environmentId: string;
  /** Every folder the listing read that its caller may read: its own, imported and referenced ones. */
  reads: FolderRef[];
}

/**
 * The listing an operator syncs, for the in-process operator and for
 * GET /api/v1/operator/secrets alike: one read of the secrets (audited as a
 * get-secrets read by the caller, references expanded, imports grouped), and
 * every folder it read that the caller may read. The caller's stream shows no
 * change of a folder it may not read, so an operator is never told of one.
 */
export class OperatorListings {
  readonly #reader: SecretReader;
  readonly #deps: ServiceDeps;

  constructor(reader: SecretReader, deps: ServiceDeps) {
    this.#reader = reader;
    this.#deps = deps;
  }

  /** `fresh` (coffer.dev/force-sync) reads past the listings machine callers share by revision. */
  async list(actor: Actor, source: SecretSource, options: { fresh?: boolean } = {}): Promise<OperatorListing> {
    const dependencies = new Set<string>();
    const listing = await this.#reader.list(actor, {
      projectId: source.projectId,
      environment: source.environment,
      secretPath: source.path,
      recursive: source.recursive,
      includeImports: source.includeImports,
      expandSecretReferences: true,
      dependencies,
      importedTags: true,
      fresh: options.fresh ?? false,
    });
    // the reader records each folder whose content reached the listing, the listed environment's own first
    // (places the caller may read, and what those import); a recursive listing may have read none
    const reads = await this.#reader.readablePlaces(actor, source.projectId, [...dependencies].map(folderRefOf));
    const { db, lookups } = this.#deps;
    const environmentId = reads[0]?.environmentId ?? (await lookups.requireEnvironment(db, source.projectId, source.environment)).id;
    return {
      secrets: listing.secrets
        .filter((secret) => secret.type === 'shared')
        .map((secret) => ({ key: secret.secretKey, value: secret.secretValue, path: secret.secretPath, tags: secret.tags.map((tag) => tag.slug) })),
      imports: (listing.imports ?? []).map((group) => ({
        environment: group.environment,
        path: group.secretPath,
        secrets: group.secrets.map((secret) => ({ key: secret.secretKey, value: secret.secretValue, tags: secret.tags.map((tag) => tag.slug) })),
      })),
      environmentId,
      reads,
    };
  }
}
