import { type EffectivePermissions, toEffectivePermissions } from '../permissions/permission-schema.ts';
import { randomInt } from 'node:crypto';
import slugify from '@sindresorhus/slugify';
import type { Actor } from '../actor/actor.ts';
import { createEnvironmentWithRoot } from '../environments/environment-service.ts';
import { listEnvironmentsOfProjects } from '../environments/environment-lookup.ts';
import { BadRequestError } from '../errors.ts';
import { assertRootKeyCurrent } from '../installation/root-key.ts';
import type { ServiceDeps } from '../services/deps.ts';
import type { WriteContext } from '../services/unit-of-work.ts';
import type { ProjectReference } from './project-lookup.ts';
import { toProjectResponse, toProjectWithEnvironments } from './project-schema.ts';
import { addIdentityProjectAdmin, addUserProjectAdmin, deleteProject, insertProject, listProjectsOfOrg, setProjectDataKey, updateProject } from './project-store.ts';

export const DEFAULT_ENVIRONMENTS = [
  { name: 'Development', slug: 'dev', position: 1 },
  { name: 'Staging', slug: 'staging', position: 2 },
  { name: 'Production', slug: 'prod', position: 3 },
] as const;

const SLUG_ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789';
const GENERATED_SLUG_ATTEMPTS = 5;

/** "<slugified name>-<4 random characters>", within the 36-character slug limit. */
export function generateProjectSlug(name: string): string {
  const suffix = Array.from({ length: 4 }, () => SLUG_ALPHABET[randomInt(SLUG_ALPHABET.length)]).join('');
  const base = slugify(name).slice(0, 31).replace(/-+$/, '') || 'project';
  return `${base}-${suffix}`;
}

function duplicateSlug(slug: string): BadRequestError {
  return new BadRequestError(`A project with the slug '${slug}' already exists in this organization`, 'DuplicateSlug');
}

export class ProjectService {
  readonly #deps: ServiceDeps;

  constructor(deps: ServiceDeps) {
    this.#deps = deps;
  }

  /** A project with the default environments; a generated slug that another project took is generated again. */
  async create(actor: Actor, input: { projectName: string; slug?: string }) {
    let slug = input.slug;
    return this.#deps.unitOfWork.write(
      actor,
      async (tx) => {
        await tx.authorizeOrg({ action: 'create', subject: 'workspace' });
        slug = input.slug ?? generateProjectSlug(input.projectName);
        return this.createInTransaction(tx, input.projectName, slug);
      },
      {
        retry: { on: input.slug ? [] : ['projects_slug_key'], attempts: GENERATED_SLUG_ATTEMPTS },
        conflicts: { projects_slug_key: () => duplicateSlug(slug!) },
      },
    );
  }

  /**
   * The creation itself, in the caller's unit of work (the operator creates a
   * project together with its claim and grant). The caller checked the org
   * permission; a taken slug fails with the unique violation projects_slug_key.
   */
  async createInTransaction(tx: WriteContext, name: string, slug: string) {
    const { keyring } = this.#deps;
    const { actor } = tx;
    await assertRootKeyCurrent(tx.db, keyring);
    const created = await insertProject(tx.db, { name, slug, orgId: actor.orgId });
    await setProjectDataKey(tx.db, created.id, keyring.createProjectKey(created.id));
    const environments = [];
    for (const environment of DEFAULT_ENVIRONMENTS) {
      environments.push(await createEnvironmentWithRoot(tx.db, { projectId: created.id, ...environment }));
    }
    if (actor.kind === 'identity') await addIdentityProjectAdmin(tx.db, created.id, actor.id);
    else await addUserProjectAdmin(tx.db, created.id, actor.id);
    tx.audit({ project: created, type: 'create-project', metadata: { projectId: created.id, name, slug } });
    return toProjectWithEnvironments(created, environments);
  }

  async list(actor: Actor) {
    // Org admins see every project of the organization; everyone else the projects they are a member of.
    const member = actor.orgRole === 'admin' ? null : { kind: actor.kind, id: actor.id };
    const projects = await listProjectsOfOrg(this.#deps.db, actor.orgId, member);
    const environments = await listEnvironmentsOfProjects(
      this.#deps.db,
      projects.map((project) => project.id),
    );
    return projects.map((project) => toProjectWithEnvironments(project, environments.get(project.id) ?? []));
  }

  async get(actor: Actor, projectId: string) {
    return this.#read(actor, { id: projectId });
  }

  async getBySlug(actor: Actor, slug: string) {
    return this.#read(actor, { orgId: actor.orgId, slug });
  }

  async update(actor: Actor, projectId: string, changes: { name?: string; autoCapitalization?: boolean }) {
    return this.#deps.unitOfWork.write(actor, async (tx) => {
      const project = await tx.project({ id: projectId }, { lock: true });
      await tx.authorize({ project, action: 'edit', subject: 'settings' });
      const updated = await updateProject(tx.db, project.id, changes);
      tx.audit({
        project: updated,
        type: 'update-project',
        metadata: {
          projectId: project.id,
          oldName: project.name,
          newName: updated.name,
          oldAutoCapitalization: project.autoCapitalization,
          newAutoCapitalization: updated.autoCapitalization,
        },
      });
      return toProjectResponse(updated);
    });
  }

  async delete(actor: Actor, projectId: string) {
    const { keyring } = this.#deps;
    return this.#deps.unitOfWork.write(actor, async (tx) => {
      const project = await tx.project({ id: projectId }, { lock: true });
      await tx.authorize({ project, action: 'delete', subject: 'workspace' });
      await deleteProject(tx.db, project.id);
      tx.audit({ project, type: 'delete-project', metadata: { projectId: project.id, name: project.name, slug: project.slug } });
      tx.change({ projectId: project.id, environmentId: null, environmentSlug: null, secretPath: null, kind: 'project-deleted' });
      tx.afterCommit(() => keyring.forgetProject(project.id));
      return toProjectResponse(project);
    });
  }

  /** What the caller itself may do in the project (404 for a project it is no member of, as every project route answers). */
  async effectivePermissions(actor: Actor, projectId: string): Promise<EffectivePermissions> {
    const { db, lookups, permissions } = this.#deps;
    const project = await lookups.requireProject(db, { id: projectId });
    return toEffectivePermissions(await permissions.forProject(actor, project));
  }

  async #read(actor: Actor, reference: ProjectReference) {
    const { db, lookups, permissions } = this.#deps;
    const project = await lookups.requireProject(db, reference);
    await permissions.assertProject({ actor, project, action: 'read', subject: 'workspace' });
    return toProjectWithEnvironments(project, await lookups.listEnvironments(db, project.id));
  }
}
