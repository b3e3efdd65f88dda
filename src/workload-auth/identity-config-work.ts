import type { Actor } from '../actor/actor.ts';
import { authorizeIdentityAccess } from '../identities/identity-service.ts';
import type { OrgIdentity } from '../identities/identity-store.ts';
import type { Action } from '../permissions/permission-rules.ts';
import type { ServiceDeps } from '../services/deps.ts';
import type { WriteContext } from '../services/unit-of-work.ts';

/**
 * One unit of work on an identity's login configuration: the identity (404 outside the caller's organization),
 * the org permission on identities and the privilege check (nobody manages an identity above their own org role),
 * the work, and its audit entry (reads are audited too).
 */
export async function runIdentityConfigWork<T>(
  deps: ServiceDeps,
  actor: Actor,
  identityId: string,
  action: Action,
  work: (tx: WriteContext, identity: OrgIdentity) => Promise<{ result: T; event: string; metadata: Record<string, unknown> }>,
): Promise<T> {
  return deps.unitOfWork.write(actor, async (tx) => {
    const identity = await authorizeIdentityAccess(deps, tx, identityId, action);
    const { result, event, metadata } = await work(tx, identity);
    tx.audit({ orgId: identity.orgId, type: event, metadata: { identityId: identity.id, ...metadata } });
    return result;
  });
}
