import type { Actor } from '../actor/actor.ts';
import type { Executor } from '../db/database.ts';
import { isUniqueViolation } from '../db/errors.ts';
import type { NamespaceGrant, Project } from '../db/schema.ts';
import { ConflictError, NotFoundError } from '../errors.ts';
import { requireLockedProject, requireProjectByIdOrSlug } from '../projects/project-lookup.ts';
import type { ServiceDeps } from '../services/deps.ts';
import { type NamespaceGrantResponse, toGrantResponse } from './grant-schema.ts';
import { deleteGrant, findGrant, insertGrant, listGrants, type Place } from './grant-store.ts';

/**
 * Namespace grants through the API: a project admin lets one namespace of one
 * cluster use the project (its SecretsProject may claim it, its Integrations
 * and SecretImports may read it), lists who may, and revokes. Each change is
 * audited and recorded in the change feed (kind `access`), so the operator
 * acts on it at once.
 */
export class NamespaceGrantService {
  readonly #deps: ServiceDeps;
  /** The cluster a grant names when the caller gives none: the in-process operator's. */
  readonly #defaultCluster: string;

  constructor(deps: ServiceDeps, defaultCluster: string) {
    this.#deps = deps;
    this.#defaultCluster = defaultCluster;
  }

  async create(actor: Actor, projectIdOrSlug: string, input: { cluster?: string; namespace: string }): Promise<NamespaceGrantResponse> {
    const place = { cluster: input.cluster ?? this.#defaultCluster, namespace: input.namespace };
    const grant = await this.#write(actor, projectIdOrSlug, 'create', async (trx, project) => {
      try {
        return await insertGrant(trx, { projectId: project.id, ...place, origin: 'api', ...grantedBy(actor) });
      } catch (error) {
        if (!isUniqueViolation(error, 'namespace_grants_place_key')) throw error;
        throw new ConflictError(`Namespace '${place.namespace}' of cluster '${place.cluster}' already has a grant for this project`, 'GrantExists');
      }
    });
    return toGrantResponse(grant);
  }

  async list(actor: Actor, projectIdOrSlug: string): Promise<NamespaceGrantResponse[]> {
    const { db, permissions } = this.#deps;
    const project = await requireProjectByIdOrSlug(db, actor.orgId, projectIdOrSlug);
    await permissions.assertProjectPermission(actor, project, 'read', 'namespace-grants');
    return (await listGrants(db, project.id)).map(toGrantResponse);
  }

  /** Revokes a grant: the namespace's SecretsProject goes Ready=False and its Integrations stop syncing. */
  async revoke(actor: Actor, projectIdOrSlug: string, grantId: string): Promise<NamespaceGrantResponse> {
    const grant = await this.#write(actor, projectIdOrSlug, 'delete', async (trx, project) => {
      const found = await findGrant(trx, project.id, grantId);
      if (!found) throw new NotFoundError(`Namespace grant with ID '${grantId}' not found in this project`);
      await deleteGrant(trx, found.id);
      return found;
    });
    return toGrantResponse(grant);
  }

  /** One transaction: the project locked, the permission checked, the change, its audit row and change-feed row. */
  async #write(actor: Actor, projectIdOrSlug: string, action: 'create' | 'delete', change: (trx: Executor, project: Project) => Promise<NamespaceGrant>) {
    const { db, permissions, audit, changes } = this.#deps;
    const grant = await db.transaction().execute(async (trx) => {
      const project = await requireLockedProject(trx, (await requireProjectByIdOrSlug(trx, actor.orgId, projectIdOrSlug)).id);
      await permissions.assertProjectPermission(actor, project, action, 'namespace-grants', undefined, trx);
      const written = await change(trx, project);
      await audit.record(trx, actor, { orgId: project.orgId, projectId: project.id, projectName: project.name }, {
        type: action === 'create' ? 'create-namespace-grant' : 'delete-namespace-grant',
        metadata: { grantId: written.id, cluster: written.cluster, namespace: written.namespace, origin: written.origin },
      });
      await changes.record(trx, [accessChange(project.id)]);
      return written;
    });
    changes.committed();
    return grant;
  }
}

export function grantedBy(actor: Actor) {
  return { grantedByType: actor.kind, grantedById: actor.id, grantedByName: actor.name };
}

export function accessChange(projectId: string) {
  return { projectId, environmentId: null, environmentSlug: null, secretPath: null, kind: 'access' as const };
}

export type { Place };
