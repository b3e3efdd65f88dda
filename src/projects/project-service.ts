import { randomInt } from 'node:crypto';
import slugify from '@sindresorhus/slugify';
import type { Actor } from '../actor/actor.ts';
import type { Executor } from '../db/database.ts';
import { isUniqueViolation } from '../db/errors.ts';
import { createEnvironmentWithRoot } from '../environments/environment-service.ts';
import { listEnvironments, listEnvironmentsOfProjects } from '../environments/environment-store.ts';
import { BadRequestError } from '../errors.ts';
import { assertRootKeyCurrent } from '../installation/root-key.ts';
import type { ServiceDeps } from '../services/deps.ts';
import { requireLockedProject, requireProject, requireProjectBySlug } from './project-lookup.ts';
import { toProjectResponse, toProjectWithEnvironments } from './project-schema.ts';
import {
  addIdentityProjectAdmin,
  addUserProjectAdmin,
  deleteProject,
  insertProject,
  listProjectsOfOrg,
  setProjectDataKey,
  updateProject,
} from './project-store.ts';

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

export class ProjectService {
  readonly #deps: ServiceDeps;

  constructor(deps: ServiceDeps) {
    this.#deps = deps;
  }

  async create(actor: Actor, input: { projectName: string; slug?: string }) {
    await this.#deps.permissions.assertOrgPermission(actor, actor.orgId, 'create', 'workspace');
    for (let attempt = 1; ; attempt++) {
      const slug = input.slug ?? generateProjectSlug(input.projectName);
      try {
        return await this.#createWithSlug(actor, input.projectName, slug);
      } catch (error) {
        if (!isUniqueViolation(error, 'projects_slug_key')) throw error;
        if (input.slug || attempt >= GENERATED_SLUG_ATTEMPTS) {
          throw new BadRequestError(`A project with the slug '${slug}' already exists in this organization`, 'DuplicateSlug');
        }
      }
    }
  }

  async #createWithSlug(actor: Actor, name: string, slug: string) {
    return this.#deps.db.transaction().execute((trx) => this.createInTransaction(trx, actor, name, slug));
  }

  /**
   * The creation itself, in the caller's transaction (the operator creates a
   * project together with its claim and grant). The caller checked the org
   * permission; a taken slug fails with the unique violation projects_slug_key.
   */
  async createInTransaction(trx: Executor, actor: Actor, name: string, slug: string) {
    const { keyring, audit } = this.#deps;
    await assertRootKeyCurrent(trx, keyring);
    const created = await insertProject(trx, { name, slug, orgId: actor.orgId });
    await setProjectDataKey(trx, created.id, keyring.createProjectKey(created.id));
    const environments = [];
    for (const environment of DEFAULT_ENVIRONMENTS) {
      environments.push(await createEnvironmentWithRoot(trx, { projectId: created.id, ...environment }));
    }
    await this.#addCreatorAsAdmin(trx, actor, created.id);
    await audit.record(trx, actor, { orgId: actor.orgId, projectId: created.id, projectName: name }, {
      type: 'create-project',
      metadata: { projectId: created.id, name, slug },
    });
    return toProjectWithEnvironments(created, environments);
  }

  async #addCreatorAsAdmin(trx: Executor, actor: Actor, projectId: string): Promise<void> {
    if (actor.kind === 'identity') await addIdentityProjectAdmin(trx, projectId, actor.id);
    else await addUserProjectAdmin(trx, projectId, actor.id);
  }

  async list(actor: Actor) {
    // Org admins see every project of the organization; everyone else the projects they are a member of.
    const member = actor.orgRole === 'admin' ? null : { kind: actor.kind, id: actor.id };
    const projects = await listProjectsOfOrg(this.#deps.db, actor.orgId, member);
    const environments = await listEnvironmentsOfProjects(this.#deps.db, projects.map((project) => project.id));
    return projects.map((project) => toProjectWithEnvironments(project, environments.get(project.id) ?? []));
  }

  async get(actor: Actor, projectId: string) {
    const project = await requireProject(this.#deps.db, projectId);
    await this.#deps.permissions.assertProjectPermission(actor, project, 'read', 'workspace');
    return toProjectWithEnvironments(project, await listEnvironments(this.#deps.db, project.id));
  }

  async update(actor: Actor, projectId: string, changes: { name?: string; autoCapitalization?: boolean }) {
    const { db, permissions, audit } = this.#deps;
    return db.transaction().execute(async (trx) => {
      const project = await requireLockedProject(trx, projectId);
      await permissions.assertProjectPermission(actor, project, 'edit', 'settings', undefined, trx);
      const updated = await updateProject(trx, project.id, changes);
      await audit.record(trx, actor, { orgId: project.orgId, projectId: project.id, projectName: updated.name }, {
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
    const { db, permissions, audit, changes, keyring } = this.#deps;
    const deleted = await db.transaction().execute(async (trx) => {
      const project = await requireLockedProject(trx, projectId);
      await permissions.assertProjectPermission(actor, project, 'delete', 'workspace', undefined, trx);
      await deleteProject(trx, project.id);
      await audit.record(trx, actor, { orgId: project.orgId, projectId: project.id, projectName: project.name }, {
        type: 'delete-project',
        metadata: { projectId: project.id, name: project.name, slug: project.slug },
      });
      await changes.record(trx, [
        { projectId: project.id, environmentId: null, environmentSlug: null, secretPath: null, kind: 'project-deleted' },
      ]);
      return project;
    });
    keyring.forgetProject(deleted.id);
    changes.committed();
    return toProjectResponse(deleted);
  }

  async getBySlug(actor: Actor, slug: string) {
    const project = await requireProjectBySlug(this.#deps.db, actor.orgId, slug);
    await this.#deps.permissions.assertProjectPermission(actor, project, 'read', 'workspace');
    return toProjectWithEnvironments(project, await listEnvironments(this.#deps.db, project.id));
  }
}
