import type { Change, Revision } from '../../port/coffer-port.ts';

/** A listing and the revision it is current at (its data is that of this revision). */
export type CurrentListing<Listing extends object> = Listing & { revision: Revision };

/**
 * The operator's listings by what they list (project, environment, path,
 * recursion, imports), each tagged with the change-feed revision it was read
 * at. Every change that can alter a listing commits a new revision, so a
 * listing is still current when the latest revision is its own, or when every
 * change since has been seen here and only touched integration records.
 * Integrations sharing a source, and a resync that finds nothing changed, read
 * it once (one get-secrets audit entry per listing and revision).
 */
export class ListingCache<Listing extends object> {
  readonly #entries = new Map<string, { revision: Revision; listing: Promise<Listing> }>();
  /** Whether a revision is an integration-record change this operator wrote itself (known before the feed delivers it). */
  readonly #isOwnRecordChange: (revision: Revision) => boolean;
  /** Every change up to this revision has been observed. */
  #observedUpTo = 0;
  /** The newest observed change that may alter listings. */
  #lastRelevant = 0;
  /** Every change up to this revision is observed or one of our own integration-record writes. */
  #accountedUpTo = 0;

  constructor(isOwnRecordChange: (revision: Revision) => boolean = () => false) {
    this.#isOwnRecordChange = isOwnRecordChange;
  }

  /** Starting point: changes up to `revision` are taken as seen, and as possibly relevant. */
  reset(revision: Revision): void {
    this.#entries.clear();
    this.#observedUpTo = revision;
    this.#lastRelevant = revision;
    this.#accountedUpTo = revision;
  }

  /** Feed every committed change, in revision order. */
  observe(changes: readonly Change[]): void {
    const lastRelevant = this.#lastRelevant;
    for (const change of changes) {
      this.#observedUpTo = Math.max(this.#observedUpTo, change.revision);
      if (change.altersSecrets) this.#lastRelevant = Math.max(this.#lastRelevant, change.revision);
    }
    // the scan is for memory (get() never serves an entry older than the last relevant change to a newer reader): once per relevant change, not per batch
    if (this.#lastRelevant === lastRelevant) return;
    for (const [key, entry] of this.#entries) if (entry.revision < this.#lastRelevant) this.#entries.delete(key);
  }

  /** Forgets the listing for `key`: the next get() reads it. */
  drop(key: string): void {
    this.#entries.delete(key);
  }

  /**
   * The listing for `key` as of `latestRevision` (the newest committed revision, read before calling).
   * `fresh` (a forced sync) reads it whatever is kept, and keeps what it read: a change made outside the
   * change log is then seen by the syncs after it too.
   */
  async get(key: string, latestRevision: Revision, read: () => Promise<Listing>, fresh = false): Promise<CurrentListing<Listing>> {
    const entry = fresh ? undefined : this.#entries.get(key);
    if (entry && (entry.revision === latestRevision || (this.#accountedFor(latestRevision) && this.#lastRelevant <= entry.revision))) {
      return { ...(await entry.listing), revision: entry.revision };
    }
    const listing = read();
    this.#entries.set(key, { revision: latestRevision, listing });
    listing.catch(() => {
      if (this.#entries.get(key)?.listing === listing) this.#entries.delete(key);
    });
    return { ...(await listing), revision: latestRevision };
  }

  /**
   * Every change up to `revision` is either observed, or one of our own
   * integration-record writes the feed has not delivered yet (which alter no
   * listing). The operator's own writes would otherwise make every sync of a
   * burst miss until the feed catches up. A gap in the revisions (a rolled
   * back write) counts as unknown: the listing is read again.
   */
  #accountedFor(revision: Revision): boolean {
    this.#accountedUpTo = Math.max(this.#accountedUpTo, this.#observedUpTo);
    while (this.#accountedUpTo < revision && this.#isOwnRecordChange(this.#accountedUpTo + 1)) this.#accountedUpTo++;
    return revision <= this.#accountedUpTo;
  }
}
