import type { Actor } from '../actor/actor.ts';
import type { Executor } from '../db/database.ts';
import type { Environment, Project } from '../db/schema.ts';
import { BadRequestError, NotFoundError } from '../errors.ts';
import { createRootFolder } from '../folders/folder-lookup.ts';
import { requireLockedProject, requireProject } from '../projects/project-lookup.ts';
import type { ServiceDeps } from '../services/deps.ts';
import { toEnvironmentResponse } from './environment-schema.ts';
import {
  deleteEnvironment,
  findEnvironmentById,
  findEnvironmentBySlug,
  insertEnvironment,
  maxEnvironmentPosition,
  shiftEnvironmentPositions,
  updateEnvironment,
} from './environment-store.ts';

/** An environment and its root folder; callers hold the project lock. */
export async function createEnvironmentWithRoot(
  db: Executor,
  values: { projectId: string; name: string; slug: string; position: number },
): Promise<Environment> {
  const environment = await insertEnvironment(db, values);
  await createRootFolder(db, environment.id);
  return environment;
}

function duplicateSlug(slug: string): BadRequestError {
  return new BadRequestError(`Environment with slug '${slug}' already exists in this project`, 'DuplicateEnvironmentSlug');
}

export class EnvironmentService {
  readonly #deps: ServiceDeps;

  constructor(deps: ServiceDeps) {
    this.#deps = deps;
  }

  async create(actor: Actor, projectId: string, input: { name: string; slug: string; position?: number }) {
    const { db, permissions, audit, changes } = this.#deps;
    const environment = await db.transaction().execute(async (trx) => {
      const project = await requireLockedProject(trx, projectId);
      await permissions.assertProjectPermission(actor, project, 'create', 'environments', undefined, trx);
      if (await findEnvironmentBySlug(trx, project.id, input.slug)) throw duplicateSlug(input.slug);
      const position = await this.#claimPosition(trx, project.id, input.position);
      const created = await createEnvironmentWithRoot(trx, { projectId: project.id, name: input.name, slug: input.slug, position });
      await audit.record(trx, actor, this.#scope(project), {
        type: 'create-environment',
        metadata: { name: created.name, slug: created.slug },
      });
      await changes.record(trx, [this.#change(created, 'environment-created')]);
      return created;
    });
    changes.committed();
    return toEnvironmentResponse(environment);
  }

  /** The requested position, shifting occupants up by one; else after the last one. */
  async #claimPosition(db: Executor, projectId: string, requested: number | undefined): Promise<number> {
    const max = await maxEnvironmentPosition(db, projectId);
    if (requested === undefined || requested > max) return requested ?? max + 1;
    await shiftEnvironmentPositions(db, projectId, requested, null, 1);
    return requested;
  }

  async update(actor: Actor, projectId: string, environmentId: string, input: { name?: string; slug?: string; position?: number }) {
    const { db, permissions, audit, changes } = this.#deps;
    const environment = await db.transaction().execute(async (trx) => {
      const project = await requireLockedProject(trx, projectId);
      await permissions.assertProjectPermission(actor, project, 'edit', 'environments', undefined, trx);
      const current = await this.#requireInProject(trx, project, environmentId);
      if (input.slug && input.slug !== current.slug && (await findEnvironmentBySlug(trx, project.id, input.slug))) {
        throw duplicateSlug(input.slug);
      }
      if (input.position && input.position !== current.position) await this.#makeRoomForMove(trx, current, input.position);
      const updated = await updateEnvironment(trx, current.id, {
        name: input.name || undefined,
        slug: input.slug || undefined,
        position: input.position || undefined,
      });
      await audit.record(trx, actor, this.#scope(project), {
        type: 'update-environment',
        metadata: {
          oldName: current.name,
          newName: updated.name,
          oldSlug: current.slug,
          newSlug: updated.slug,
          oldPos: current.position,
          newPos: updated.position,
        },
      });
      await changes.record(trx, [this.#change(updated, 'environment-updated')]);
      return updated;
    });
    changes.committed();
    return toEnvironmentResponse(environment);
  }

  /** Moving to an occupied position shifts the environments in between by one, keeping order stable. */
  async #makeRoomForMove(db: Executor, environment: Environment, target: number): Promise<void> {
    const occupant = await db
      .selectFrom('projectEnvironments')
      .select('id')
      .where('projectId', '=', environment.projectId)
      .where('position', '=', target)
      .executeTakeFirst();
    if (!occupant) return;
    if (target < environment.position) {
      await shiftEnvironmentPositions(db, environment.projectId, target, environment.position - 1, 1);
    } else {
      await shiftEnvironmentPositions(db, environment.projectId, environment.position + 1, target, -1);
    }
  }

  async delete(actor: Actor, projectId: string, environmentId: string) {
    const { db, permissions, audit, changes } = this.#deps;
    const environment = await db.transaction().execute(async (trx) => {
      const project = await requireLockedProject(trx, projectId);
      await permissions.assertProjectPermission(actor, project, 'delete', 'environments', undefined, trx);
      const current = await this.#requireInProject(trx, project, environmentId);
      await deleteEnvironment(trx, current.id);
      await audit.record(trx, actor, this.#scope(project), {
        type: 'delete-environment',
        metadata: { name: current.name, slug: current.slug },
      });
      await changes.record(trx, [this.#change(current, 'environment-deleted')]);
      return current;
    });
    changes.committed();
    return toEnvironmentResponse(environment);
  }

  async get(actor: Actor, environmentId: string, projectId?: string) {
    const { db, permissions } = this.#deps;
    const environment = await findEnvironmentById(db, environmentId);
    if (!environment || (projectId !== undefined && environment.projectId !== projectId)) {
      throw new NotFoundError(`Environment with ID '${environmentId}' not found`);
    }
    const project = await requireProject(db, environment.projectId);
    await permissions.assertProjectPermission(actor, project, 'read', 'environments');
    return toEnvironmentResponse(environment);
  }

  async #requireInProject(db: Executor, project: Project, environmentId: string): Promise<Environment> {
    const environment = await findEnvironmentById(db, environmentId);
    if (!environment || environment.projectId !== project.id) {
      throw new NotFoundError(`Environment with ID '${environmentId}' in project with ID '${project.id}' not found`);
    }
    return environment;
  }

  #scope(project: Project) {
    return { orgId: project.orgId, projectId: project.id, projectName: project.name };
  }

  #change(environment: Environment, kind: 'environment-created' | 'environment-updated' | 'environment-deleted') {
    return { projectId: environment.projectId, environmentId: environment.id, environmentSlug: environment.slug, secretPath: null, kind };
  }
}
