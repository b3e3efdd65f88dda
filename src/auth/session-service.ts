import type { Actor } from '../actor/actor.ts';
import { actsForAccount } from './account-reach.ts';
import { ForbiddenError, NotFoundError } from '../errors.ts';
import { authorizeMemberAccess } from '../orgs/org-membership-service.ts';
import type { ServiceDeps } from '../services/deps.ts';
import { findUserSession, listLiveSessions, revokeUserSessions } from './session-store.ts';

/** The sessions a caller's own session reaches: every organization's for a password session, its own organization's otherwise (actsForAccount). */
function reachOf(actor: Actor): { orgId?: string } {
  return actsForAccount(actor) ? {} : { orgId: actor.orgId };
}

function requireUser(actor: Actor): string {
  if (actor.kind !== 'user') throw new ForbiddenError('Only users have sessions: an identity revokes its access token with POST /api/v1/auth/token/revoke', 'NotAUser');
  return actor.id;
}

/**
 * A user's sessions: listed (device, address, last use) and revoked, one or all; an org admin revokes a
 * member's sessions in the organization. A revocation writes `user_sessions`, which moves the sessions
 * cache's version in the same transaction: every replica refuses the session on its next request
 * (caches/README.md).
 */
export class SessionService {
  readonly #deps: ServiceDeps;

  constructor(deps: ServiceDeps) {
    this.#deps = deps;
  }

  async list(actor: Actor) {
    const userId = requireUser(actor);
    const rows = await listLiveSessions(this.#deps.db, userId, new Date(), reachOf(actor).orgId);
    return {
      sessions: rows.map((row) => ({
        id: row.id,
        organizationId: row.orgId,
        authMethod: row.authMethod,
        userAgent: row.userAgent,
        ip: row.lastIp ?? row.ip,
        createdAt: row.createdAt.toISOString(),
        lastUsedAt: (row.lastUsedAt ?? row.createdAt).toISOString(),
        expiresAt: row.expiresAt.toISOString(),
        current: row.id === actor.tokenId,
      })),
    };
  }

  /** One of the caller's own sessions; another's (or an unknown id) answers 404. */
  async revoke(actor: Actor, sessionId: string) {
    const userId = requireUser(actor);
    return this.#deps.unitOfWork.write(actor, async (tx) => {
      tx.authorizedBy('a user ends one of their own sessions');
      const session = await findUserSession(tx.db, sessionId);
      const reach = reachOf(actor);
      if (!session || session.userId !== userId || session.isRevoked || (reach.orgId && session.orgId !== reach.orgId)) {
        throw new NotFoundError('Session not found', 'SessionNotFound');
      }
      await revokeUserSessions(tx.db, userId, { only: sessionId });
      tx.audit({ orgId: actor.orgId, type: 'revoke-user-session', metadata: { userId, sessionIds: [sessionId] } });
      return { message: 'Session revoked' };
    });
  }

  /** Every session of the caller, in every organization; with `keepCurrent`, all but the one this request carries. */
  async revokeAll(actor: Actor, keepCurrent: boolean) {
    const userId = requireUser(actor);
    return this.#deps.unitOfWork.write(actor, async (tx) => {
      tx.authorizedBy('a user ends their own sessions');
      const revoked = await revokeUserSessions(tx.db, userId, { ...reachOf(actor), ...(keepCurrent && actor.tokenId ? { except: actor.tokenId } : {}) });
      tx.audit({ orgId: actor.orgId, type: 'revoke-user-session', metadata: { userId, sessionIds: revoked } });
      return { message: 'Sessions revoked', revoked: revoked.length };
    });
  }

  /** An org admin ends a member's sessions in the organization (never above their own role). */
  async revokeMember(actor: Actor, organizationId: string, userId: string) {
    return this.#deps.unitOfWork.write(actor, async (tx) => {
      await authorizeMemberAccess(this.#deps, tx, organizationId, userId, 'Failed to manage a more privileged member');
      const revoked = await revokeUserSessions(tx.db, userId, { orgId: organizationId });
      tx.audit({ orgId: organizationId, type: 'revoke-user-session', metadata: { userId, sessionIds: revoked, byAdmin: true } });
      return { message: 'Sessions revoked', revoked: revoked.length };
    });
  }
}
