import { AsyncLocalStorage } from 'node:async_hooks';

/** What one request has committed so far: the newest change-feed revision of its writes. */
export interface CommittedRevisions {
  newest?: number;
}

const requests = new AsyncLocalStorage<CommittedRevisions>();

/**
 * Runs `work` as one request: every write unit committed inside it reports
 * its newest revision here (the HTTP layer answers it as `Coffer-Revision`,
 * so a caller can wait until the operators reflect it).
 */
export function trackCommittedRevisions(revisions: CommittedRevisions, work: () => void): void {
  requests.run(revisions, work);
}

/** Called by the unit of work after a commit that recorded changes; outside a request it does nothing. */
export function noteCommittedRevision(revision: number): void {
  const revisions = requests.getStore();
  if (revisions) revisions.newest = Math.max(revisions.newest ?? 0, revision);
}
