import type { SecretApprovalPolicy } from '../db/schema.ts';
import { AppError } from '../errors.ts';
import { compilePathGlob } from '../patterns/patterns.ts';
import type { WriteContext } from '../services/unit-of-work.ts';
import type { SecretScope } from './secret-scope.ts';

/** A direct write to a protected place let through by a soft policy: recorded in the write's audit entry. */
export interface ApprovalBypass {
  approvalBypass: { policyId: string; policyName: string };
}

/**
 * The approval policy protecting a place: of the environment's policies whose path glob matches, the one with the
 * longest literal base (the most specific), the oldest among equals.
 */
export async function approvalPolicyAt(tx: WriteContext, scope: Pick<SecretScope, 'project' | 'environment' | 'path'>): Promise<SecretApprovalPolicy | undefined> {
  const policies = await tx.approvalPolicies(scope.project.id, scope.environment.id);
  const matching = policies.map((policy) => ({ policy, glob: compilePathGlob(policy.secretPath) })).filter(({ glob }) => glob.matches(scope.path));
  matching.sort((a, b) => b.glob.base.length - a.glob.base.length);
  return matching[0]?.policy;
}

/**
 * A write that does not go through an approval request (a machine identity's write, a v4 single write, a restore): refused at a
 * place a hard policy protects, let through and marked for the audit entry at a place a soft one protects (machine
 * identities only: a user's change there is a change request). `advice` ends the refusal: what the caller can do.
 */
export async function directWriteAllowance(
  tx: WriteContext,
  scope: Pick<SecretScope, 'project' | 'environment' | 'path'>,
  advice = 'write as a user through /api/v3/secrets/raw or a batch route to open a change request',
): Promise<ApprovalBypass | undefined> {
  const policy = await approvalPolicyAt(tx, scope);
  if (!policy) return undefined;
  if (policy.enforcementLevel === 'soft' && tx.actor.kind === 'identity') return { approvalBypass: { policyId: policy.id, policyName: policy.name } };
  throw new AppError(
    403,
    'ApprovalRequired',
    `'${scope.path}' in environment '${scope.environment.slug}' is protected by the approval policy '${policy.name}': ${advice}`,
  );
}
