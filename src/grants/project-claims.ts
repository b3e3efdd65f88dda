import type { Actor } from '../actor/actor.ts';
import type { ProjectClaim } from '../db/schema.ts';
import { actingCluster } from '../clusters/acting-cluster.ts';
import { findClusterByName } from '../clusters/cluster-store.ts';
import { AppError, NotFoundError } from '../errors.ts';
import type { ProjectService } from '../projects/project-service.ts';
import { findProject } from '../projects/project-lookup.ts';
import type { ServiceDeps } from '../services/deps.ts';
import type { WriteContext } from '../services/unit-of-work.ts';
import { grantCall } from './grant-schema.ts';
import { grantedBy, recordGrant } from './grant-service.ts';
import { deleteClaim, findClaimByProjectSlug, findClaimOfProject, findGrantFor, insertClaim, insertGrant, lockClaimOf, type Place } from './grant-store.ts';

/** A SecretsProject as the claims know it: where it is and which object it is. */
export interface Claimant extends Place {
  name: string;
  uid: string;
}

/** A claim an organization admin dropped, and whether its cluster was still registered (or the server's own). */
export interface DroppedClaim extends Claimant {
  projectId: string;
  createdProject: boolean;
  clusterRegistered: boolean;
}

/** A SecretsProject as a caller names it: the cluster, when named at all, must be the one the caller acts for. */
export type NamedClaimant = Omit<Claimant, 'cluster'> & { cluster?: string | undefined };

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
 * status), and what the resources of a namespace may use. A claim is named by
 * organization, cluster, namespace and name, and its cluster is always the one
 * the caller's credential acts for (`actingCluster`), never a request field.
 * A SecretsProject creates a project (its namespace then holds a grant of
 * origin `created`) or claims an existing one only with a grant for its
 * namespace; a project has at most one claimant per cluster, so one project
 * syncs into any number of clusters; a claim is never taken over by another
 * uid; only a project the claimant created may be deleted with it.
 */
export class ProjectClaims {
  readonly #deps: ServiceDeps;
  readonly #projects: ProjectService;
  /** The in-process operator's cluster name (COFFER_CLUSTER_NAME): never a gone cluster. */
  readonly #ownCluster: string;

  constructor(deps: ServiceDeps, projects: ProjectService, ownCluster: string) {
    this.#deps = deps;
    this.#projects = projects;
    this.#ownCluster = ownCluster;
  }

  /**
   * The project `named` declares: its claim, a new project, or an existing one its namespace has a grant for.
   * A refused declaration takes nothing (its transaction is rolled back).
   */
  async declare(actor: Actor, named: NamedClaimant, wanted: { slug: string; name: string }): Promise<{ projectId: string; created: boolean }> {
    const claimant = { ...named, cluster: actingCluster(actor, named.cluster) };
    const standing = await this.#standingClaim(actor, claimant);
    if (standing) return standing;
    // two claimants at once: the loser tries again and finds what the winner made
    const raced = () => new AccessRefusedError('ProjectClaimed', `project '${wanted.slug}' was declared at the same time by another SecretsProject; trying again`);
    return this.#deps.unitOfWork.write(
      actor,
      async (tx) => {
        await tx.authorizeOrg({ action: 'create', subject: 'workspace' });
        const held = await lockClaimOf(tx.db, actor.orgId, claimant, claimant.name);
        if (held && held.resourceUid !== claimant.uid) throw heldByAnotherUid(claimant);
        if (held) {
          if (!(await findGrantFor(tx.db, held.projectId, claimant))) {
            throw new AccessRefusedError(
              'GrantRevoked',
              `the grant of namespace '${claimant.namespace}' of cluster '${claimant.cluster}' for project '${wanted.slug}' was revoked; nothing is read or changed until a project admin gives one again: ${grantCall(wanted.slug, claimant.cluster, claimant.namespace)}`,
            );
          }
          return { projectId: held.projectId, created: held.createdProject };
        }
        const existing = await findProject(tx.db, { orgId: actor.orgId, slug: wanted.slug });
        if (!existing) return this.#create(tx, claimant, wanted);
        if (!(await findGrantFor(tx.db, existing.id, claimant))) {
          throw new AccessRefusedError(
            'GrantMissing',
            `project '${wanted.slug}' exists and namespace '${claimant.namespace}' of cluster '${claimant.cluster}' has no grant for it; nothing is read or changed. A project admin can give one: ${grantCall(wanted.slug, claimant.cluster, claimant.namespace)}`,
          );
        }
        const other = await findClaimOfProject(tx.db, existing.id, claimant.cluster);
        if (other) throw claimedBy(wanted.slug, other);
        await insertClaim(tx.db, { ...claimRow(tx.actor, claimant), projectId: existing.id, createdProject: false });
        tx.audit({ project: existing, type: 'create-project-claim', metadata: { cluster: claimant.cluster, namespace: claimant.namespace, name: claimant.name } });
        return { projectId: existing.id, created: false };
      },
      { conflicts: { projects_slug_key: raced, project_claims_resource_key: raced, project_claims_project_cluster_key: raced } },
    );
  }

  /**
   * The claimant's claim when it stands as recorded (its uid, its own namespace's grant), as every resync of a
   * SecretsProject finds it: read without a transaction, through the claims' versioned cache that its Integrations
   * read it from too. Anything else (no claim, another uid, a revoked grant) goes the locked way, which decides and
   * names it. The permission is checked first, as there.
   */
  async #standingClaim(actor: Actor, claimant: Claimant): Promise<{ projectId: string; created: boolean } | undefined> {
    await this.#deps.permissions.assertOrg({ actor, orgId: actor.orgId, action: 'create', subject: 'workspace' });
    const found = await this.#deps.lookups.claimWithGrants(this.#deps.db, actor.orgId, claimant, claimant);
    return found?.ownGrantId ? { projectId: found.projectId, created: found.createdProject } : undefined;
  }

  /** A new project for the claimant, its claim, and its namespace's grant (origin `created`). */
  async #create(tx: WriteContext, claimant: Claimant, wanted: { slug: string; name: string }) {
    const project = await this.#projects.createInTransaction(tx, wanted.name, wanted.slug);
    await insertClaim(tx.db, { ...claimRow(tx.actor, claimant), projectId: project.id, createdProject: true });
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
   * `named` is deleted: its claim ends. With deletionPolicy Delete the
   * project is deleted too, but only if this very claimant created it.
   */
  async release(actor: Actor, named: NamedClaimant, deleteProject: boolean): Promise<'deleted' | 'released' | 'none'> {
    const claimant = { ...named, cluster: actingCluster(actor, named.cluster) };
    const claim = await this.#deps.unitOfWork.write(actor, async (tx) => {
      const held = await lockClaimOf(tx.db, actor.orgId, claimant, claimant.name);
      if (!held || held.resourceUid !== claimant.uid) {
        tx.authorizedBy('nothing to end: only the SecretsProject that holds the claim (same uid) ends it');
        return undefined;
      }
      const project = await this.#deps.lookups.requireProject(tx.db, { id: held.projectId });
      await tx.authorize({ project, action: 'delete', subject: 'namespace-grants' });
      if (deleteProject && held.createdProject) return held;
      await deleteClaim(tx.db, held.id);
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
   * An organization admin drops an orphaned claim: one whose cluster is gone
   * (unregistered) or whose SecretsProject was deleted without its finalizer
   * releasing it. The server cannot see a remote cluster's objects, so the
   * admin's word (and, when given, the uid the claim must hold) is the
   * evidence; the entry in the audit log says who dropped what. The project,
   * its grants and records stay.
   */
  async dropOrphan(actor: Actor, named: Omit<Claimant, 'uid'> & { uid?: string | undefined }): Promise<DroppedClaim> {
    return this.#deps.unitOfWork.write(actor, async (tx) => {
      await tx.authorizeOrg({ action: 'delete', subject: 'settings' });
      const held = await lockClaimOf(tx.db, actor.orgId, named, named.name);
      if (!held || (named.uid !== undefined && held.resourceUid !== named.uid)) {
        const uid = named.uid === undefined ? '' : ` under uid '${named.uid}'`;
        throw new NotFoundError(`No claim of ${describe(named)}${uid} in this organization`, 'ClaimNotFound');
      }
      const clusterRegistered = held.cluster === this.#ownCluster || (await findClusterByName(tx.db, actor.orgId, held.cluster)) !== undefined;
      await deleteClaim(tx.db, held.id);
      tx.audit({
        orgId: actor.orgId,
        projectId: held.projectId,
        type: 'delete-project-claim',
        metadata: { cluster: held.cluster, namespace: held.namespace, name: held.name, droppedAsOrphan: true, clusterRegistered },
      });
      return {
        cluster: held.cluster,
        namespace: held.namespace,
        name: held.name,
        uid: held.resourceUid,
        projectId: held.projectId,
        createdProject: held.createdProject,
        clusterRegistered,
      };
    });
  }

  /**
   * The project a resource in `using` may read through the SecretsProject
   * `declaring`, both in the cluster the actor acts for: the declaration must
   * be recorded, `using` must hold a grant, or be the declaring namespace (with
   * its grant), or be listed in `allowedNamespaces` of a SecretsProject that
   * created the project; and the actor must be allowed to read its secrets.
   */
  async authorizeUse(
    actor: Actor,
    named: NamedClaimant & { allowedNamespaces: string[] },
    usingNamed: { cluster?: string | undefined; namespace: string },
  ): Promise<{ projectId: string; slug: string }> {
    const cluster = actingCluster(actor, named.cluster);
    const declaring = { ...named, cluster };
    const using = { namespace: usingNamed.namespace, cluster: actingCluster(actor, usingNamed.cluster) };
    const granted = await this.#granted(actor.orgId, declaring, using);
    const project = await this.#deps.lookups.requireProject(this.#deps.db, { id: granted.projectId });
    (await this.#deps.permissions.forProject(actor, project)).assert('read', 'secrets');
    return granted;
  }

  async #granted(orgId: string, declaring: Claimant & { allowedNamespaces: string[] }, using: Place): Promise<{ projectId: string; slug: string }> {
    const found = await this.#deps.lookups.claimWithGrants(this.#deps.db, orgId, declaring, using);
    if (!found) throw new AccessRefusedError('ProjectNotReady', `${describe(declaring)} has not declared its project yet`);
    const granted = { projectId: found.projectId, slug: found.slug };
    if (using.namespace === declaring.namespace) {
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
   * Which SecretsProject of a cluster declares the project with this slug (from the database, not from any
   * resource's status). The claimant (its uid above all) is shown to the operator of that cluster and to the
   * project's admins; anyone else is told there is none.
   */
  async claimantOfSlug(actor: Actor, cluster: string, slug: string): Promise<Claimant | undefined> {
    const claim = await findClaimByProjectSlug(this.#deps.db, actor.orgId, cluster, slug);
    if (!claim || !(await this.#maySeeClaim(actor, claim))) return undefined;
    return { cluster: claim.cluster, namespace: claim.namespace, name: claim.name, uid: claim.resourceUid };
  }

  async #maySeeClaim(actor: Actor, claim: ProjectClaim): Promise<boolean> {
    if (actor.cluster === claim.cluster) return true;
    const project = await this.#deps.lookups.requireProject(this.#deps.db, { id: claim.projectId });
    const permissions = await this.#deps.permissions.forProject(actor, project).catch((error: unknown) => {
      if (error instanceof AppError && (error.statusCode === 403 || error.statusCode === 404)) return undefined;
      throw error;
    });
    return permissions?.can('create', 'namespace-grants') ?? false;
  }
}

function claimRow(actor: Actor, claimant: Claimant): Omit<ProjectClaim, 'id' | 'projectId' | 'createdProject' | 'claimedAt'> {
  return {
    orgId: actor.orgId,
    cluster: claimant.cluster,
    namespace: claimant.namespace,
    name: claimant.name,
    resourceUid: claimant.uid,
    claimedByIdentityId: actor.kind === 'identity' ? actor.id : null,
  };
}

function claimedBy(slug: string, other: ProjectClaim): AccessRefusedError {
  return new AccessRefusedError(
    'ProjectClaimed',
    `project '${slug}' is already declared by ${describe(other)}; other namespaces of that cluster use it through that SecretsProject`,
  );
}

function heldByAnotherUid(claimant: Claimant): AccessRefusedError {
  return new AccessRefusedError(
    'ProjectClaimed',
    `${describe(claimant)} holds its claim under another uid (a resource of that name that was never released); nothing was taken. Its claim ends when that SecretsProject is deleted with its finalizer`,
  );
}
