import type { Actor } from '../actor/actor.ts';
import type { Executor } from '../db/database.ts';
import type { Environment, Project } from '../db/schema.ts';
import { BadRequestError, NotFoundError } from '../errors.ts';
import { createRootFolder } from '../folders/folder-service.ts';
import type { ServiceDeps } from '../services/deps.ts';
import type { WriteContext } from '../services/unit-of-work.ts';
import { toEnvironmentResponse } from './environment-schema.ts';
import {
  deleteEnvironment,
  findEnvironmentById,
  findEnvironmentBySlug,
  insertEnvironment,
  isEnvironmentPositionTaken,
  maxEnvironmentPosition,
  shiftEnvironmentPositions,
  updateEnvironment,
} from './environment-store.ts';
import { mayKnowProject } from '../services/project-visibility.ts';

/** An environment and its root folder; callers hold the project lock. */
export async function createEnvironmentWithRoot(db: Executor, values: { projectId: string; name: string; slug: string; position: number }): Promise<Environment> {
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
    return this.#write(actor, projectId, 'create', async (tx, project) => {
      if (await findEnvironmentBySlug(tx.db, project.id, input.slug)) throw duplicateSlug(input.slug);
      const position = await this.#claimPosition(tx.db, project.id, input.position);
      const created = await createEnvironmentWithRoot(tx.db, { projectId: project.id, name: input.name, slug: input.slug, position });
      tx.audit({ project, type: 'create-environment', metadata: { name: created.name, slug: created.slug } });
      tx.change(this.#change(created, 'environment-created'));
      return toEnvironmentResponse(created);
    });
  }

  /** The requested position, shifting occupants up by one; else after the last one. */
  async #claimPosition(db: Executor, projectId: string, requested: number | undefined): Promise<number> {
    const max = await maxEnvironmentPosition(db, projectId);
    if (requested === undefined || requested > max) return requested ?? max + 1;
    await shiftEnvironmentPositions(db, projectId, requested, null, 1);
    return requested;
  }

  async update(actor: Actor, projectId: string, environmentId: string, input: { name?: string; slug?: string; position?: number }) {
    return this.#write(actor, projectId, 'edit', async (tx, project) => {
      const current = await this.#requireInProject(tx.db, project, environmentId);
      if (input.slug && input.slug !== current.slug && (await findEnvironmentBySlug(tx.db, project.id, input.slug))) {
        throw duplicateSlug(input.slug);
      }
      if (input.position && input.position !== current.position) await this.#makeRoomForMove(tx.db, current, input.position);
      const updated = await updateEnvironment(tx.db, current.id, {
        name: input.name || undefined,
        slug: input.slug || undefined,
        position: input.position || undefined,
      });
      tx.audit({
        project,
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
      tx.change(this.#change(updated, 'environment-updated'));
      return toEnvironmentResponse(updated);
    });
  }

  /** Moving to an occupied position shifts the environments in between by one, keeping order stable. */
  async #makeRoomForMove(db: Executor, environment: Environment, target: number): Promise<void> {
    if (!(await isEnvironmentPositionTaken(db, environment.projectId, target))) return;
    if (target < environment.position) {
      await shiftEnvironmentPositions(db, environment.projectId, target, environment.position - 1, 1);
    } else {
      await shiftEnvironmentPositions(db, environment.projectId, environment.position + 1, target, -1);
    }
  }

  async delete(actor: Actor, projectId: string, environmentId: string) {
    return this.#write(actor, projectId, 'delete', async (tx, project) => {
      const current = await this.#requireInProject(tx.db, project, environmentId);
      await deleteEnvironment(tx.db, current.id);
      tx.audit({ project, type: 'delete-environment', metadata: { name: current.name, slug: current.slug } });
      tx.change(this.#change(current, 'environment-deleted'));
      return toEnvironmentResponse(current);
    });
  }

  /** Environment writes lock the project row: positions and slugs of one project change one write at a time. */
  #write<T>(actor: Actor, projectId: string, action: 'create' | 'edit' | 'delete', work: (tx: WriteContext, project: Project) => Promise<T>): Promise<T> {
    return this.#deps.unitOfWork.write(actor, async (tx) => {
      const project = await tx.project({ id: projectId }, { lock: true });
      await tx.authorize({ project, action, subject: 'environments' });
      return work(tx, project);
    });
  }

  async get(actor: Actor, environmentId: string, projectId?: string) {
    const { db, permissions, lookups } = this.#deps;
    const environment = await findEnvironmentById(db, environmentId);
    const found = environment && (projectId === undefined || environment.projectId === projectId);
    if (!found || !(await mayKnowProject(this.#deps, db, actor, environment.projectId))) {
      throw new NotFoundError(`Environment with ID '${environmentId}' not found`);
    }
    const project = await lookups.requireProject(db, { id: environment.projectId });
    await permissions.assertProject({ actor, project, action: 'read', subject: 'environments' });
    return toEnvironmentResponse(environment);
  }

  async #requireInProject(db: Executor, project: Project, environmentId: string): Promise<Environment> {
    const environment = await findEnvironmentById(db, environmentId);
    if (!environment || environment.projectId !== project.id) {
      throw new NotFoundError(`Environment with ID '${environmentId}' in project with ID '${project.id}' not found`);
    }
    return environment;
  }

  #change(environment: Environment, kind: 'environment-created' | 'environment-updated' | 'environment-deleted') {
    return { projectId: environment.projectId, environmentId: environment.id, environmentSlug: environment.slug, secretPath: null, kind };
  }
}
