import type { Actor } from '../actor/actor.ts';
import type { Executor } from '../db/database.ts';
import type { ProjectClaim } from '../db/schema.ts';
import { AppError } from '../errors.ts';
import type { ProjectService } from '../projects/project-service.ts';
import { findProject } from '../projects/project-lookup.ts';
import type { ServiceDeps } from '../services/deps.ts';
import type { WriteContext } from '../services/unit-of-work.ts';
import { grantCall } from './grant-schema.ts';
import { grantedBy, recordGrant } from './grant-service.ts';
import {
  deleteClaim,
  findClaimByProjectSlug,
  findClaimOfProject,
  findClaimWithGrants,
  findGrantFor,
  insertClaim,
  insertGrant,
  lockClaimOf,
  type Place,
} from './grant-store.ts';

/** A SecretsProject as the claims know it: where it is and which object it is. */
export interface Claimant extends Place {
  name: string;
  uid: string;
}

/** Why a SecretsProject or Integration may not use a project; `code` is the condition reason the operator reports. */
export class AccessRefusedError extends AppError {
  constructor(code: 'GrantMissing' | 'GrantRevoked' | 'ProjectClaimed' | 'Forbidden' | 'ProjectNotReady', message: string) {
    super(403, code, message);
  }
}

const describe = (claimant: Place & { name: string }) => `SecretsProject '${claimant.namespace}/${claimant.name}' of cluster '${claimant.cluster}'`;

/**
 * The Kubernetes side of namespace grants: which SecretsProject declares which
 * project (a claim, recorded in the database, never taken from a resource's
 * status), and what the resources of a namespace may use. A SecretsProject
 * creates a project (its namespace then holds a grant of origin `created`) or
 * claims an existing one only with a grant for its namespace; one project has
 * at most one claimant; only a project the claimant created may be deleted
 * with it.
 */
export class ProjectClaims {
  readonly #deps: ServiceDeps;
  readonly #projects: ProjectService;

  constructor(deps: ServiceDeps, projects: ProjectService) {
    this.#deps = deps;
    this.#projects = projects;
  }

  /** The project `claimant` declares: its claim, a new project, or an existing one its namespace has a grant for. */
  async declare(actor: Actor, claimant: Claimant, wanted: { slug: string; name: string }): Promise<{ projectId: string; created: boolean }> {
    // two claimants at once: the loser tries again and finds what the winner made
    const raced = () => new AccessRefusedError('ProjectClaimed', `project '${wanted.slug}' was declared at the same time by another SecretsProject; trying again`);
    return this.#deps.unitOfWork.write(
      actor,
      async (tx) => {
        await tx.authorizeOrg({ action: 'create', subject: 'workspace' });
        const held = await lockClaimOf(tx.db, claimant, claimant.name);
        if (held) await this.#assertSameOrg(tx.db, actor, held);
        if (held?.resourceUid === claimant.uid) {
          if (!(await findGrantFor(tx.db, held.projectId, claimant))) {
            throw new AccessRefusedError(
              'GrantRevoked',
              `the grant of namespace '${claimant.namespace}' of cluster '${claimant.cluster}' for project '${wanted.slug}' was revoked; nothing is read or changed until a project admin gives one again: ${grantCall(wanted.slug, claimant.cluster, claimant.namespace)}`,
            );
          }
          return { projectId: held.projectId, created: held.createdProject };
        }
        // the resource was deleted and made again: its former claim no longer stands for it
        if (held) await deleteClaim(tx.db, held.projectId);
        const existing = await findProject(tx.db, { orgId: actor.orgId, slug: wanted.slug });
        if (!existing) return this.#create(tx, claimant, wanted);
        if (!(await findGrantFor(tx.db, existing.id, claimant))) {
          throw new AccessRefusedError(
            'GrantMissing',
            `project '${wanted.slug}' exists and namespace '${claimant.namespace}' of cluster '${claimant.cluster}' has no grant for it; nothing is read or changed. A project admin can give one: ${grantCall(wanted.slug, claimant.cluster, claimant.namespace)}`,
          );
        }
        const other = await findClaimOfProject(tx.db, existing.id);
        if (other) throw claimedBy(wanted.slug, other);
        await insertClaim(tx.db, { projectId: existing.id, ...claimantRow(claimant), createdProject: false });
        tx.audit({ project: existing, type: 'create-project-claim', metadata: { cluster: claimant.cluster, namespace: claimant.namespace, name: claimant.name } });
        return { projectId: existing.id, created: false };
      },
      { conflicts: { projects_slug_key: raced, project_claims_pkey: raced, project_claims_resource_key: raced } },
    );
  }

  /** A new project for the claimant, its claim, and its namespace's grant (origin `created`). */
  async #create(tx: WriteContext, claimant: Claimant, wanted: { slug: string; name: string }) {
    const project = await this.#projects.createInTransaction(tx, wanted.name, wanted.slug);
    await insertClaim(tx.db, { projectId: project.id, ...claimantRow(claimant), createdProject: true });
    const grant = await insertGrant(tx.db, {
      projectId: project.id,
      cluster: claimant.cluster,
      namespace: claimant.namespace,
      origin: 'created',
      ...grantedBy(tx.actor),
    });
    recordGrant(tx, { id: project.id, orgId: tx.actor.orgId, name: project.name }, grant, 'create-namespace-grant');
    return { projectId: project.id, created: true };
  }

  /**
   * `claimant` is deleted: its claim ends. With deletionPolicy Delete the
   * project is deleted too, but only if this very claimant created it.
   */
  async release(actor: Actor, claimant: Claimant, deleteProject: boolean): Promise<'deleted' | 'released' | 'none'> {
    const claim = await this.#deps.unitOfWork.write(actor, async (tx) => {
      const held = await lockClaimOf(tx.db, claimant, claimant.name);
      if (!held || held.resourceUid !== claimant.uid) {
        tx.authorizedBy('nothing to end: only the SecretsProject that holds the claim (same uid) ends it');
        return undefined;
      }
      await this.#assertSameOrg(tx.db, actor, held);
      const project = await this.#deps.lookups.requireProject(tx.db, { id: held.projectId });
      await tx.authorize({ project, action: 'delete', subject: 'namespace-grants' });
      if (deleteProject && held.createdProject) return held;
      await deleteClaim(tx.db, held.projectId);
      tx.audit({
        orgId: actor.orgId,
        projectId: held.projectId,
        type: 'delete-project-claim',
        metadata: { cluster: claimant.cluster, namespace: claimant.namespace, name: claimant.name },
      });
      return null;
    });
    if (claim === undefined) return 'none';
    if (claim === null) return 'released';
    await this.#projects.delete(actor, claim.projectId);
    return 'deleted';
  }

  /**
   * The project a resource in `using` may read through the SecretsProject
   * `declaring`: the declaration must be recorded, and `using` must hold a
   * grant, or be the declaring namespace (with its grant), or be listed in
   * `allowedNamespaces` of a SecretsProject that created the project.
   */
  async authorizeUse(declaring: Claimant & { allowedNamespaces: string[] }, using: Place): Promise<{ projectId: string; slug: string }> {
    const found = await findClaimWithGrants(this.#deps.db, declaring, using);
    if (!found) throw new AccessRefusedError('ProjectNotReady', `${describe(declaring)} has not declared its project yet`);
    const granted = { projectId: found.projectId, slug: found.slug };
    if (using.namespace === declaring.namespace && using.cluster === declaring.cluster) {
      if (found.ownGrantId) return granted;
      throw new AccessRefusedError(
        'GrantRevoked',
        `the grant of namespace '${using.namespace}' of cluster '${using.cluster}' for project '${found.slug}' was revoked; nothing is synced until a project admin gives one again: ${grantCall(found.slug, using.cluster, using.namespace)}`,
      );
    }
    if (found.usedGrantId) return granted;
    if (found.createdProject && found.ownGrantId && declaring.allowedNamespaces.includes(using.namespace)) return granted;
    throw new AccessRefusedError(
      'Forbidden',
      `namespace '${using.namespace}' may not use project '${found.slug}' (declared by ${describe(declaring)}): it needs to be in that SecretsProject's allowedNamespaces (for a project the SecretsProject created) or a grant from a project admin: ${grantCall(found.slug, using.cluster, using.namespace)}`,
    );
  }

  /**
   * Claims are named by cluster, namespace and name, which another organization's operator may
   * name too: one organization never reads or ends another's claim.
   */
  async #assertSameOrg(trx: Executor, actor: Actor, claim: ProjectClaim): Promise<void> {
    const project = await this.#deps.lookups.requireProject(trx, { id: claim.projectId });
    if (project.orgId !== actor.orgId) {
      throw new AccessRefusedError(
        'ProjectClaimed',
        `SecretsProject '${claim.namespace}/${claim.name}' of cluster '${claim.cluster}' is declared in another organization`,
      );
    }
  }

  /** authorizeUse for an operator in another cluster: the project must also be one the caller may read secrets of. */
  async authorizeUseAs(actor: Actor, declaring: Claimant & { allowedNamespaces: string[] }, using: Place): Promise<{ projectId: string; slug: string }> {
    const granted = await this.authorizeUse(declaring, using);
    const project = await this.#deps.lookups.requireProject(this.#deps.db, { id: granted.projectId });
    (await this.#deps.permissions.forProject(actor, project)).assert('read', 'secrets');
    return granted;
  }

  /** Which SecretsProject of `cluster` declares the project with this slug (from the database, not from any resource's status). */
  async claimantOfSlug(orgId: string, cluster: string, slug: string): Promise<Claimant | undefined> {
    const claim = await findClaimByProjectSlug(this.#deps.db, orgId, cluster, slug);
    return claim && { cluster: claim.cluster, namespace: claim.namespace, name: claim.name, uid: claim.resourceUid };
  }
}

function claimantRow(claimant: Claimant): Omit<ProjectClaim, 'projectId' | 'createdProject' | 'claimedAt'> {
  return { cluster: claimant.cluster, namespace: claimant.namespace, name: claimant.name, resourceUid: claimant.uid };
}

function claimedBy(slug: string, other: ProjectClaim): AccessRefusedError {
  return new AccessRefusedError('ProjectClaimed', `project '${slug}' is already declared by ${describe(other)}; other namespaces use it through that SecretsProject`);
}
