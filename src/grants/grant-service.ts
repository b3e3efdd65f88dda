import type { Actor } from '../actor/actor.ts';
import type { NamespaceGrant, Project } from '../db/schema.ts';
import { ConflictError, NotFoundError } from '../errors.ts';
import type { ServiceDeps } from '../services/deps.ts';
import type { WriteContext, WriteOptions } from '../services/unit-of-work.ts';
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
    const exists = () => new ConflictError(`Namespace '${place.namespace}' of cluster '${place.cluster}' already has a grant for this project`, 'GrantExists');
    return this.#write(actor, projectIdOrSlug, 'create', (tx, project) => insertGrant(tx.db, { projectId: project.id, ...place, origin: 'api', ...grantedBy(actor) }), {
      namespace_grants_place_key: exists,
    });
  }

  async list(actor: Actor, projectIdOrSlug: string): Promise<NamespaceGrantResponse[]> {
    const { db, permissions, lookups } = this.#deps;
    const project = await lookups.requireProject(db, { orgId: actor.orgId, idOrSlug: projectIdOrSlug });
    await permissions.assertProject({ actor, project, action: 'read', subject: 'namespace-grants' });
    return (await listGrants(db, project.id)).map(toGrantResponse);
  }

  /** Revokes a grant: the namespace's SecretsProject goes Ready=False and its Integrations stop syncing. */
  async revoke(actor: Actor, projectIdOrSlug: string, grantId: string): Promise<NamespaceGrantResponse> {
    return this.#write(actor, projectIdOrSlug, 'delete', async (tx, project) => {
      const found = await findGrant(tx.db, project.id, grantId);
      if (!found) throw new NotFoundError(`Namespace grant with ID '${grantId}' not found in this project`);
      await deleteGrant(tx.db, found.id);
      return found;
    });
  }

  /** The project locked, the permission checked, the change, its audit entry and change-feed row. */
  #write(
    actor: Actor,
    projectIdOrSlug: string,
    action: 'create' | 'delete',
    change: (tx: WriteContext, project: Project) => Promise<NamespaceGrant>,
    conflicts: WriteOptions['conflicts'] = {},
  ): Promise<NamespaceGrantResponse> {
    return this.#deps.unitOfWork.write(
      actor,
      async (tx) => {
        const project = await tx.project({ orgId: actor.orgId, idOrSlug: projectIdOrSlug }, { lock: true });
        await tx.authorize({ project, action, subject: 'namespace-grants' });
        const written = await change(tx, project);
        recordGrant(tx, project, written, action === 'create' ? 'create-namespace-grant' : 'delete-namespace-grant');
        return toGrantResponse(written);
      },
      { conflicts },
    );
  }
}

/** A grant given or revoked: audited, and in the change feed (kind `access`) so the operator acts on it at once. */
export function recordGrant(
  tx: WriteContext,
  project: Pick<Project, 'id' | 'orgId' | 'name'>,
  grant: NamespaceGrant,
  type: 'create-namespace-grant' | 'delete-namespace-grant',
): void {
  tx.audit({ project, type, metadata: { grantId: grant.id, cluster: grant.cluster, namespace: grant.namespace, origin: grant.origin } });
  tx.change({ projectId: project.id, environmentId: null, environmentSlug: null, secretPath: null, kind: 'access' });
}

export function grantedBy(actor: Actor) {
  return { grantedByType: actor.kind, grantedById: actor.id, grantedByName: actor.name };
}

export type { Place };
