import type { Actor } from '../actor/actor.ts';
import { ForbiddenError, PermissionDeniedError } from '../errors.ts';

export type Action = 'read' | 'create' | 'edit' | 'delete';
export type ProjectSubject =
  | 'workspace'
  | 'settings'
  | 'environments'
  | 'secret-folders'
  | 'secrets'
  | 'secret-imports'
  | 'tags'
  | 'integrations'
  | 'audit-logs'
  | 'member'
  | 'identity'
  | 'role';
export type OrgSubject = 'workspace' | 'identity' | 'member' | 'audit-logs';

/**
 * Decides what an actor may do. For now only organization admins may act;
 * project roles and privileges replace this rule without changing callers.
 */
export class PermissionService {
  assertOrgPermission(actor: Actor, orgId: string, action: Action, subject: OrgSubject): void {
    this.#assertSameOrg(actor, orgId);
    if (actor.orgRole !== 'admin') throw new PermissionDeniedError(action, subject);
  }

  assertProjectPermission(actor: Actor, project: { orgId: string }, action: Action, subject: ProjectSubject): void {
    this.#assertSameOrg(actor, project.orgId);
    if (actor.orgRole !== 'admin') throw new PermissionDeniedError(action, subject);
  }

  #assertSameOrg(actor: Actor, orgId: string): void {
    if (actor.orgId !== orgId) {
      throw new ForbiddenError('You are not a member of the organization that owns this resource', 'ForbiddenError');
    }
  }
}
