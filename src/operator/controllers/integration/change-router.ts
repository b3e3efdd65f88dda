import type { Logger } from 'pino';
import type { Change, Revision, RotationNote, SecretListing } from '../../port/coffer-port.ts';
import { formatNamespacedName, type NamespacedName } from '../../runtime/object-key.ts';
import { DependencyIndex, type IntegrationDependencies } from './dependency-index.ts';
import { type CurrentListing, ListingCache } from './listing-cache.ts';

/** A secret rotation at a place an Integration reads reached a phase. */
export interface RotationReached {
  integration: NamespacedName;
  rotation: RotationNote;
  revision: Revision;
}

export interface ChangeRouterOptions {
  logger: Logger;
  /** Whether a revision is one of this operator's own integration-record writes (the port's change stream). */
  isOwnWrite: (revision: Revision) => boolean;
}

/**
 * Which Integrations a committed change touches, and how current what they
 * read is: the dependency index (what each read), the listings by revision,
 * when a touched Integration's earliest pending change was committed
 * (change-to-Secret latency).
 */
export class ChangeRouter {
  readonly #options: ChangeRouterOptions;
  readonly #dependencies = new DependencyIndex();
  readonly #listings: ListingCache<SecretListing>;
  readonly #changedSince = new Map<string, Date>();
  /** Per Integration, the newest change routed to it that may alter its data. */
  readonly #lastChange = new Map<string, Revision>();

  constructor(options: ChangeRouterOptions) {
    this.#options = options;
    // The operator's own integration-record writes alter no listing.
    this.#listings = new ListingCache(options.isOwnWrite);
  }

  /** Leadership starts at `revision`: listings read before it are not trusted. */
  startAt(revision: Revision): void {
    this.#listings.reset(revision);
  }

  /**
   * The Integrations `changes` touch through what they read (in revision
   * order); `access` changes (grants) and rotation phases are left to the
   * caller. Integration-record writes of this operator and tag changes touch none.
   */
  *route(changes: readonly Change[]): Iterable<NamespacedName | { access: string } | RotationReached> {
    this.#listings.observe(changes);
    for (const change of changes) {
      // the reconcile that wrote an integration record of its own is already at work on it
      if ((change.kind === 'integration' && change.ownWrite) || change.kind === 'tags') continue;
      if (change.kind === 'access') {
        yield { access: change.projectId };
        continue;
      }
      this.#dependencies.observe(change);
      const affected = this.#dependencies.affected(change);
      this.#options.logger.debug(
        {
          revision: change.revision,
          change: change.kind,
          projectId: change.projectId,
          environment: change.environmentSlug,
          secretPath: change.secretPath,
          integrations: affected.map(formatNamespacedName),
        },
        `change ${change.revision} (${change.kind}) affects ${affected.length} Integration${affected.length === 1 ? '' : 's'}`,
      );
      for (const key of affected) {
        // a rotation's phase alters nothing the Integration reads: it is told, not synced again
        if (change.rotation) {
          yield { integration: key, rotation: change.rotation, revision: change.revision };
          continue;
        }
        const id = formatNamespacedName(key);
        if (change.altersSecrets && !this.#changedSince.has(id)) this.#changedSince.set(id, change.committedAt);
        if (change.altersSecrets) this.#lastChange.set(id, Math.max(this.#lastChange.get(id) ?? 0, change.revision));
        yield key;
      }
    }
  }

  /** Indexes what an Integration read; true when a change it missed (routed before) needs another sync. */
  index(key: NamespacedName, dependencies: IntegrationDependencies, readAt?: Revision): boolean {
    return this.#dependencies.set(key, dependencies, readAt);
  }

  unindex(key: NamespacedName): void {
    this.#dependencies.delete(key);
  }

  /** The listing of the source `listingKey` names (integration-sources.ts listingKeyOf) as of `latestRevision` (read once per source and revision; `fresh`: read again, see ListingCache.get). */
  listing(listingKey: string, latestRevision: Revision, read: () => Promise<SecretListing>, fresh = false): Promise<CurrentListing<SecretListing>> {
    return this.#listings.get(listingKey, latestRevision, read, fresh);
  }

  /** When the earliest change the Integration has not synced yet was committed (and forgets it). */
  takeChangedAt(key: NamespacedName): Date | undefined {
    const id = formatNamespacedName(key);
    const changedAt = this.#changedSince.get(id);
    this.#changedSince.delete(id);
    return changedAt;
  }

  /** The newest change routed to the Integration that may alter its data (0: none since this process started). */
  lastChangeOf(key: NamespacedName): Revision {
    return this.#lastChange.get(formatNamespacedName(key)) ?? 0;
  }

  forget(key: NamespacedName): void {
    this.#dependencies.delete(key);
    this.#changedSince.delete(formatNamespacedName(key));
    this.#lastChange.delete(formatNamespacedName(key));
  }
}
