import type { Actor } from '../actor/actor.ts';
import type { Change } from '../changes/change-feed.ts';
import type { Executor } from '../db/database.ts';
import type { Environment, Folder, Project } from '../db/schema.ts';
import { isUuid } from '../db/uuid.ts';
import { findEnvironmentById } from '../environments/environment-lookup.ts';
import { BadRequestError, NotFoundError } from '../errors.ts';
import type { ServiceDeps } from '../services/deps.ts';
import type { WriteContext } from '../services/unit-of-work.ts';
import { requireFolder } from './folder-lookup.ts';
import { toFolderResponse } from './folder-schema.ts';
import {
  deleteFolder,
  findChildFolder,
  findDeepestFolder,
  findFolderById,
  findFolderByPath,
  folderPathSegments,
  insertFolder,
  insertRootFolder,
  listChildFolders,
  renameFolder,
} from './folder-store.ts';
import { assertPathDepth, formatSecretPath, isValidFolderName, parseSecretPath } from './secret-path.ts';
import { mayKnowProject } from '../services/project-visibility.ts';

interface FolderLocation {
  projectId: string;
  environment: string;
  path: string;
}

/** A new environment's root folder, in the caller's write (environments/environment-service.ts). */
export function createRootFolder(db: Executor, envId: string): Promise<Folder> {
  return insertRootFolder(db, envId);
}

/** Makes the folder at `segments` and any missing parent, in the caller's write (a restore); answers the paths made. */
export async function makeFolderPath(db: Executor, environment: Environment, segments: string[]): Promise<{ folder: Folder; made: string[] }> {
  const deepest = await findDeepestFolder(db, environment.id, segments);
  if (!deepest) throw new NotFoundError(`Environment '${environment.slug}' has no root folder`);
  let folder = deepest.folder;
  const made: string[] = [];
  for (let depth = deepest.depth; depth < segments.length; depth++) {
    folder = await insertFolder(db, { envId: environment.id, parentId: folder.id, name: segments[depth]! });
    made.push(formatSecretPath(segments.slice(0, depth + 1)));
  }
  return { folder, made };
}

/** Deletes a folder with everything in it, in the caller's write (a restore); the trigger of 0026 records it. */
export function removeFolder(db: Executor, id: string): Promise<void> {
  return deleteFolder(db, id);
}

function folderConditions(location: FolderLocation) {
  return { environment: location.environment, secretPath: formatSecretPath(parseSecretPath(location.path)) };
}

function assertFolderName(name: string): void {
  if (!isValidFolderName(name)) {
    throw new BadRequestError(`Invalid folder name '${name}': use letters, digits, '_' and '-'`, 'InvalidFolderName');
  }
}

export class FolderService {
  readonly #deps: ServiceDeps;

  constructor(deps: ServiceDeps) {
    this.#deps = deps;
  }

  /** Creates the folder and any missing parents; an existing folder is returned unchanged. */
  async create(actor: Actor, input: FolderLocation & { name: string }) {
    assertFolderName(input.name);
    const target = [...parseSecretPath(input.path), input.name];
    assertPathDepth(target);
    const folder = await this.#deps.unitOfWork.write(
      actor,
      async (tx) => {
        const { project, environment } = await this.#authorize(tx, input, 'create');
        const deepest = await findDeepestFolder(tx.db, environment.id, target);
        if (!deepest) throw new NotFoundError(`Environment '${environment.slug}' has no root folder`);
        let folder = deepest.folder;
        for (let depth = deepest.depth; depth < target.length; depth++) {
          folder = await insertFolder(tx.db, { envId: environment.id, parentId: folder.id, name: target[depth]! });
          tx.change(this.#change(project, environment, target.slice(0, depth + 1)));
        }
        tx.audit({
          project,
          type: 'create-folder',
          metadata: { environment: environment.slug, folderId: folder.id, folderName: folder.name, folderPath: formatSecretPath(target) },
        });
        return folder;
      },
      // A concurrent request created one of the folders first: the second attempt finds it.
      { retry: { on: ['secret_folders_name_key'], attempts: 2 } },
    );
    return toFolderResponse(folder);
  }

  async list(actor: Actor, input: FolderLocation) {
    const { db, lookups, permissions } = this.#deps;
    const project = await lookups.requireProject(db, { id: input.projectId });
    await permissions.assertProject({ actor, project, action: 'read', subject: 'secret-folders', where: folderConditions(input) });
    const environment = await lookups.requireEnvironment(db, project.id, input.environment);
    const parent = await findFolderByPath(db, environment.id, parseSecretPath(input.path));
    if (!parent) return [];
    return (await listChildFolders(db, parent.id)).map(toFolderResponse);
  }

  async get(actor: Actor, folderId: string) {
    const { db, permissions, lookups } = this.#deps;
    const folder = await findFolderById(db, folderId);
    const environment = folder && folder.parentId !== null ? await findEnvironmentById(db, folder.envId) : undefined;
    if (!folder || !environment || !(await mayKnowProject(this.#deps, db, actor, environment.projectId))) {
      throw new NotFoundError(`Folder with ID '${folderId}' not found`);
    }
    const project = await lookups.requireProject(db, { id: environment.projectId });
    const path = formatSecretPath(await folderPathSegments(db, folder.id));
    await permissions.assertProject({ actor, project, action: 'read', subject: 'secret-folders', where: { environment: environment.slug, secretPath: path } });
    return {
      ...toFolderResponse(folder),
      environment: { envId: environment.id, envName: environment.name, envSlug: environment.slug },
      path,
      projectId: project.id,
    };
  }

  /** Renames the folder `folderIdOrName` inside the parent at `path`. */
  async rename(actor: Actor, folderIdOrName: string, input: FolderLocation & { name: string }) {
    assertFolderName(input.name);
    const folder = await this.#deps.unitOfWork.write(actor, async (tx) => {
      const { project, environment } = await this.#authorize(tx, input, 'edit');
      const parentSegments = parseSecretPath(input.path);
      const current = await this.#requireChild(tx.db, environment, parentSegments, folderIdOrName);
      if (current.name !== input.name && (await findChildFolder(tx.db, current.parentId!, input.name))) {
        throw new BadRequestError(`A folder named '${input.name}' already exists in '${formatSecretPath(parentSegments)}'`, 'DuplicateFolder');
      }
      const renamed = await renameFolder(tx.db, current.id, input.name);
      tx.audit({
        project,
        type: 'update-folder',
        metadata: {
          environment: environment.slug,
          folderId: current.id,
          folderPath: formatSecretPath(parentSegments),
          oldFolderName: current.name,
          newFolderName: renamed.name,
        },
      });
      tx.change(this.#change(project, environment, [...parentSegments, current.name]), this.#change(project, environment, [...parentSegments, renamed.name]));
      return renamed;
    });
    return toFolderResponse(folder);
  }

  async delete(actor: Actor, folderIdOrName: string, input: FolderLocation) {
    const folder = await this.#deps.unitOfWork.write(actor, async (tx) => {
      const { project, environment } = await this.#authorize(tx, input, 'delete');
      const parentSegments = parseSecretPath(input.path);
      const current = await this.#requireChild(tx.db, environment, parentSegments, folderIdOrName);
      if (current.isReserved) throw new BadRequestError('Reserved folders cannot be deleted', 'ReservedFolder');
      await deleteFolder(tx.db, current.id);
      const folderPath = formatSecretPath([...parentSegments, current.name]);
      tx.audit({ project, type: 'delete-folder', metadata: { environment: environment.slug, folderId: current.id, folderName: current.name, folderPath } });
      tx.change(this.#change(project, environment, [...parentSegments, current.name]));
      return current;
    });
    return toFolderResponse(folder);
  }

  /** A folder directly inside the parent path, by id (UUIDs) or by name (older clients). */
  async #requireChild(db: Executor, environment: Environment, parentSegments: string[], idOrName: string): Promise<Folder> {
    const parent = await requireFolder(db, environment, formatSecretPath(parentSegments));
    const folder = isUuid(idOrName) ? await findFolderById(db, idOrName) : await findChildFolder(db, parent.id, idOrName);
    if (!folder || folder.parentId !== parent.id) {
      throw new NotFoundError(`Folder with ID '${idOrName}' not found in '${formatSecretPath(parentSegments)}'`);
    }
    return folder;
  }

  /** The project, the permission on folders at the location, and the environment. */
  async #authorize(tx: WriteContext, location: FolderLocation, action: 'create' | 'edit' | 'delete') {
    const project = await tx.project({ id: location.projectId });
    await tx.authorize({ project, action, subject: 'secret-folders', where: folderConditions(location) });
    const environment = await this.#deps.lookups.requireEnvironment(tx.db, project.id, location.environment);
    return { project, environment };
  }

  #change(project: Project, environment: Environment, segments: string[]): Change {
    return {
      projectId: project.id,
      environmentId: environment.id,
      environmentSlug: environment.slug,
      secretPath: formatSecretPath(segments),
      kind: 'folder',
    };
  }
}
