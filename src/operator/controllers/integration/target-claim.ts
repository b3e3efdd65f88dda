import type { IntegrationResource, KindName } from '../../resources.ts';
import type { Reconciled } from '../../runtime/controller.ts';
import type { ControllerContext } from '../context.ts';
import { cachedTarget, claimedElsewhere, policyOf } from './managed-target.ts';

/**
 * Whether the resource is claimed by its target rather than by a write of its own (and so carries no finalizer): an
 * Integration that owns its Secret or ConfigMap as a whole (Owner, Orphan). Its deletion needs no finalizer: an
 * Owner target carries the Integration's ownerReference (the garbage collector deletes it), an Orphan target stays,
 * and the record goes when the operator sees the deletion or, if none ran then, at the next start (record-sweep.ts).
 * Merge takes its keys out of an object that stays, which only a finalizer can guarantee.
 */
export function claimedByTarget(kind: KindName, resource: Reconciled): boolean {
  return kind === 'Integration' && policyOf(resource as IntegrationResource) !== 'Merge';
}

/** The other installation whose target (as cached) claims this Integration (claimedElsewhere). */
export function targetClaimedElsewhere(context: ControllerContext, resource: IntegrationResource): string | undefined {
  const target = cachedTarget(context.informers, resource);
  return target && claimedElsewhere(target, resource, context.identity.installationId);
}

/**
 * This installation lost the claim of an Integration to another installation that created its target first (the
 * target's 409 on create, read live): the resource is left alone as the guard leaves it, its status unwritten.
 */
export class ClaimedElsewhere extends Error {
  readonly holder: string;

  constructor(holder: string) {
    super(`claimed by Coffer installation ${holder}`);
    this.holder = holder;
  }
}
