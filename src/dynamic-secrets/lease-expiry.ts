import type { Logger } from 'pino';
import type { RequestOrigin } from '../actor/actor.ts';
import type { ServiceDeps } from '../services/deps.ts';
import { claimExpiredLeases, findDynamicSecretById } from './dynamic-secret-store.ts';
import { revokeLease } from './lease-revoker.ts';
import { repeatPasses } from '../services/repeating-pass.ts';

/** How long a replica holds its claim on a lease it is revoking, and waits before retrying a refused revocation. */
const CLAIM_MS = 5 * 60 * 1000;
export const EXPIRY_BATCH = 50;
const MINUTE_MS = 60 * 1000;
/** Who the expiry job's audit entries name: no user or identity asked for the revocation. */
const EXPIRY_ORIGIN: RequestOrigin = { ip: null, userAgent: 'coffer lease expiry', userAgentType: 'other' };

/**
 * Revokes up to `limit` leases expired at `now`. Each is claimed first (a row update under SKIP LOCKED), so replicas
 * running this at once revoke disjoint leases; one whose revocation is refused stays, marked, and is claimed again
 * after CLAIM_MS. Answers how many were revoked.
 */
export async function revokeExpiredLeases(deps: ServiceDeps, now: Date, limit = EXPIRY_BATCH): Promise<number> {
  const claimed = await deps.unitOfWork.write(null, async (tx) => {
    tx.authorizedBy('the expiry job: leases past their expiry');
    return claimExpiredLeases(tx.db, now, new Date(now.getTime() + CLAIM_MS), limit);
  });
  let revoked = 0;
  for (const lease of claimed) {
    const config = await findDynamicSecretById(deps.db, lease.dynamicSecretId);
    if (!config) continue;
    const project = await deps.lookups.requireProject(deps.db, { id: lease.projectId });
    const done = await revokeLease(deps, { actor: EXPIRY_ORIGIN, reason: 'expired' }, project, config, lease, {
      isForced: false,
      retryAt: new Date(now.getTime() + CLAIM_MS),
    }).then(
      () => true,
      () => false,
    );
    if (done) revoked++;
  }
  return revoked;
}

/** Runs the expiry job every minute (a full batch runs again at once); returns a function that stops it. */
export function scheduleLeaseExpiry(revokeDue: () => Promise<number>, logger: Logger): () => void {
  const pass = async () => {
    const revoked = await revokeDue();
    if (revoked > 0) logger.info({ revoked }, 'expired dynamic secret leases revoked');
    return revoked === EXPIRY_BATCH;
  };
  return repeatPasses(pass, { intervalMs: MINUTE_MS, failure: 'dynamic secret lease expiry run failed', logger });
}
