import type { Actor } from '../actor/actor.ts';
import type { Change } from '../changes/change-feed.ts';
import type { Executor } from '../db/database.ts';
import { isUniqueViolation, isUuid } from '../db/errors.ts';
import type { Environment, Folder, Project } from '../db/schema.ts';
import { requireEnvironment } from '../environments/environment-lookup.ts';
import { findEnvironmentById } from '../environments/environment-store.ts';
import { BadRequestError, NotFoundError } from '../errors.ts';
import { requireProject } from '../projects/project-lookup.ts';
import type { ServiceDeps } from '../services/deps.ts';
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
  listChildFolders,
  renameFolder,
} from './folder-store.ts';
import { assertPathDepth, formatSecretPath, isValidFolderName, parseSecretPath } from './secret-path.ts';

interface FolderLocation {
  projectId: string;
  environment: string;
  path: string;
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
    const result = await this.#createOnce(actor, input, target).catch((error: unknown) => {
      // A concurrent request created one of the folders first: the retry finds it.
      if (isUniqueViolation(error, 'secret_folders_name_key')) return this.#createOnce(actor, input, target);
      throw error;
    });
    if (result.changed) this.#deps.changes.committed();
    return toFolderResponse(result.folder);
  }

  async #createOnce(actor: Actor, input: FolderLocation, target: string[]) {
    const { db, audit, changes } = this.#deps;
    return db.transaction().execute(async (trx) => {
      const { project, environment } = await this.#authorize(trx, actor, input, 'create');
      const deepest = await findDeepestFolder(trx, environment.id, target);
      if (!deepest) throw new NotFoundError(`Environment '${environment.slug}' has no root folder`);
      let folder = deepest.folder;
      const created: Change[] = [];
      for (let depth = deepest.depth; depth < target.length; depth++) {
        folder = await insertFolder(trx, { envId: environment.id, parentId: folder.id, name: target[depth]! });
        created.push(this.#change(project, environment, target.slice(0, depth + 1)));
      }
      await audit.record(trx, actor, this.#scope(project), {
        type: 'create-folder',
        metadata: { environment: environment.slug, folderId: folder.id, folderName: folder.name, folderPath: formatSecretPath(target) },
      });
      await changes.record(trx, created);
      return { folder, changed: created.length > 0 };
    });
  }

  async list(actor: Actor, input: FolderLocation) {
    const { db } = this.#deps;
    const { environment } = await this.#authorize(db, actor, input, 'read');
    const parent = await findFolderByPath(db, environment.id, parseSecretPath(input.path));
    if (!parent) return [];
    return (await listChildFolders(db, parent.id)).map(toFolderResponse);
  }

  async get(actor: Actor, folderId: string) {
    const { db, permissions } = this.#deps;
    const folder = await findFolderById(db, folderId);
    if (!folder || folder.parentId === null) throw new NotFoundError(`Folder with ID '${folderId}' not found`);
    const environment = (await findEnvironmentById(db, folder.envId))!;
    const project = await requireProject(db, environment.projectId);
    const path = formatSecretPath(await folderPathSegments(db, folder.id));
    await permissions.assertProjectPermission(actor, project, 'read', 'secret-folders', { environment: environment.slug, secretPath: path });
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
    const { db, audit, changes } = this.#deps;
    const folder = await db.transaction().execute(async (trx) => {
      const { project, environment } = await this.#authorize(trx, actor, input, 'edit');
      const parentSegments = parseSecretPath(input.path);
      const current = await this.#requireChild(trx, environment, parentSegments, folderIdOrName);
      if (current.name !== input.name && (await findChildFolder(trx, current.parentId!, input.name))) {
        throw new BadRequestError(`A folder named '${input.name}' already exists in '${formatSecretPath(parentSegments)}'`, 'DuplicateFolder');
      }
      const renamed = await renameFolder(trx, current.id, input.name);
      await audit.record(trx, actor, this.#scope(project), {
        type: 'update-folder',
        metadata: {
          environment: environment.slug,
          folderId: current.id,
          folderPath: formatSecretPath(parentSegments),
          oldFolderName: current.name,
          newFolderName: renamed.name,
        },
      });
      await changes.record(trx, [
        this.#change(project, environment, [...parentSegments, current.name]),
        this.#change(project, environment, [...parentSegments, renamed.name]),
      ]);
      return renamed;
    });
    changes.committed();
    return toFolderResponse(folder);
  }

  async delete(actor: Actor, folderIdOrName: string, input: FolderLocation) {
    const { db, audit, changes } = this.#deps;
    const folder = await db.transaction().execute(async (trx) => {
      const { project, environment } = await this.#authorize(trx, actor, input, 'delete');
      const parentSegments = parseSecretPath(input.path);
      const current = await this.#requireChild(trx, environment, parentSegments, folderIdOrName);
      if (current.isReserved) throw new BadRequestError('Reserved folders cannot be deleted', 'ReservedFolder');
      await deleteFolder(trx, current.id);
      const folderPath = formatSecretPath([...parentSegments, current.name]);
      await audit.record(trx, actor, this.#scope(project), {
        type: 'delete-folder',
        metadata: { environment: environment.slug, folderId: current.id, folderName: current.name, folderPath },
      });
      await changes.record(trx, [this.#change(project, environment, [...parentSegments, current.name])]);
      return current;
    });
    changes.committed();
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

  async #authorize(db: Executor, actor: Actor, location: FolderLocation, action: 'read' | 'create' | 'edit' | 'delete') {
    const project = await requireProject(db, location.projectId);
    const conditions = { environment: location.environment, secretPath: formatSecretPath(parseSecretPath(location.path)) };
    await this.#deps.permissions.assertProjectPermission(actor, project, action, 'secret-folders', conditions, db);
    const environment = await requireEnvironment(db, project.id, location.environment);
    return { project, environment };
  }

  #scope(project: Project) {
    return { orgId: project.orgId, projectId: project.id, projectName: project.name };
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
