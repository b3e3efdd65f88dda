import type { Actor, RequestOrigin } from '../actor/actor.ts';
import type { DynamicSecret, DynamicSecretLease, Project } from '../db/schema.ts';
import { BadRequestError } from '../errors.ts';
import type { ServiceDeps } from '../services/deps.ts';
import { openInputs } from './dynamic-secret-lookup.ts';
import { deleteLease, listLeases, markLeaseRevokeFailed } from './dynamic-secret-store.ts';
import { formatExpiration, fillTemplate } from './dynamic-secret-template.ts';
import { runOnTarget } from './dynamic-secret-target.ts';
import { PostgresServerError } from '../app-connections/postgres-server.ts';

/** The database's answer to a revocation, told to the caller and kept on the lease: a fixed sentence, never the driver's text. */
export function revocationFailed(error: PostgresServerError): BadRequestError {
  return new BadRequestError(`Failed to revoke the lease: ${error.message}`, 'DynamicSecretRevocationFailed');
}

/** Runs the revocation statement for the lease's role; a database refusal becomes a PostgresServerError. */
export async function revokeOnTarget(deps: Pick<ServiceDeps, 'keyring'>, project: Project, config: DynamicSecret, lease: DynamicSecretLease): Promise<void> {
  const inputs = openInputs(deps, project, config);
  const statements = fillTemplate(inputs.revocationStatement, { username: lease.externalEntityId, expiration: formatExpiration(new Date(lease.expireAt)) });
  await runOnTarget(inputs, statements);
}

/**
 * Revokes the lease's role, then removes the lease with its audit row (`revoke-dynamic-secret-lease`). When the
 * database refuses, the lease stays marked FailedDeletion (retried by the expiry job after `retryAt`), unless
 * `isForced` removes it anyway.
 */
export async function revokeLease(
  deps: ServiceDeps,
  who: { actor: Actor | RequestOrigin; reason: string },
  project: Project,
  config: DynamicSecret,
  lease: DynamicSecretLease,
  options: { isForced: boolean; retryAt: Date | null },
): Promise<void> {
  let failure: PostgresServerError | undefined;
  try {
    await revokeOnTarget(deps, project, config, lease);
  } catch (error) {
    if (!(error instanceof PostgresServerError)) throw error;
    failure = error;
  }
  await deps.unitOfWork.write(who.actor, async (tx) => {
    tx.authorizedBy('the caller checked the permission, or the lease expired');
    if (failure && !options.isForced) {
      await markLeaseRevokeFailed(tx.db, lease.id, revocationFailed(failure).message, options.retryAt);
      return;
    }
    await deleteLease(tx.db, lease.id);
    tx.audit({
      project,
      type: 'revoke-dynamic-secret-lease',
      metadata: { leaseId: lease.id, dynamicSecretId: config.id, dynamicSecretName: config.name, reason: who.reason, forced: failure !== undefined },
    });
  });
  if (failure && !options.isForced) throw revocationFailed(failure);
}

/** Revokes each of the dynamic secret's leases (deleting it); the first refusal stops unless `isForced`. */
export async function revokeAllLeases(deps: ServiceDeps, actor: Actor, project: Project, config: DynamicSecret, isForced: boolean): Promise<void> {
  for (const lease of await listLeases(deps.db, config.id)) {
    await revokeLease(deps, { actor, reason: 'dynamic secret deleted' }, project, config, lease, { isForced, retryAt: null });
  }
}
