import type { Logger } from 'pino';
import { describeNeeds, missingNeeds, OPERATOR_NEEDS, OPERATOR_ROLE_SLUG, type PermissionNeed } from '../../permissions/operator-role.ts';
import type { ProjectsPort } from '../port/coffer-port.ts';
import { NotReadyError } from './context.ts';
import { REFUSED_RETRY_MS } from './failures.ts';

/** The condition reason of a resource whose project the operator's identity lacks permissions in. */
export const MISSING_PERMISSIONS = 'MissingPermissions';

/**
 * Whether the operator's identity holds, in a project, every permission a
 * sync uses (OPERATOR_NEEDS): asked once per project before its first sync
 * (GET effective-permissions), and again at each retry while some are
 * missing. What is missing is logged once per project (and again if it
 * changes) and made the resource's condition, so it says exactly which
 * permissions to grant instead of failing later on the first write.
 */
export class OperatorPermissions {
  readonly #port: Pick<ProjectsPort, 'permissions'>;
  readonly #logger: Pick<Logger, 'error' | 'info'>;
  /** Projects where every need was held (kept: a revocation shows as refused requests, CofferAuthFailed or Rejected). */
  readonly #held = new Set<string>();
  /** What was last logged missing, per project. */
  readonly #reported = new Map<string, string>();

  constructor(port: Pick<ProjectsPort, 'permissions'>, logger: Pick<Logger, 'error' | 'info'>) {
    this.#port = port;
    this.#logger = logger;
  }

  /** Resolves when the identity holds every need in the project; a NotReadyError (MissingPermissions) naming the missing ones otherwise. */
  async assertHeld(projectId: string): Promise<void> {
    if (this.#held.has(projectId)) return;
    const granted = await this.#port.permissions(projectId);
    const missing = missingNeeds((action, subject) => granted.some((need) => need.subject === subject && need.actions.includes(action)), OPERATOR_NEEDS);
    if (missing.length === 0) {
      this.#held.add(projectId);
      if (this.#reported.delete(projectId)) this.#logger.info({ projectId }, "the operator's identity now holds every permission it needs in the project");
      return;
    }
    throw this.#missing(projectId, missing);
  }

  #missing(projectId: string, missing: PermissionNeed[]): NotReadyError {
    const described = describeNeeds(missing);
    const message = `the operator's identity lacks these permissions in the project: ${described} (give it the project role '${OPERATOR_ROLE_SLUG}', which has exactly what a sync needs)`;
    if (this.#reported.get(projectId) !== described) {
      this.#reported.set(projectId, described);
      this.#logger.error({ projectId, missing }, message);
    }
    return new NotReadyError(MISSING_PERMISSIONS, message, { afterMs: REFUSED_RETRY_MS });
  }
}
