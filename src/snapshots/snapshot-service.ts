import type { Actor } from '../actor/actor.ts';
import type { Change, ChangeRecord } from '../changes/change-feed.ts';
import type { Environment, Folder, Project } from '../db/schema.ts';
import { BadRequestError, NotFoundError } from '../errors.ts';
import { makeFolderPath, removeFolder } from '../folders/folder-service.ts';
import { normalizeSecretPath, parseSecretPath } from '../folders/secret-path.ts';
import { SecretCipher } from '../secrets/secret-cipher.ts';
import { countFolderSecretChanges, findChange, findRevisionAt, listFolderSecretChanges, listSecretStatesAt, type SecretState } from '../secrets/secret-history-store.ts';
import { type ApprovalBypass, directWriteAllowance } from '../secrets/protected-places.ts';
import { type RestoreCounts, restoreFolderSecrets } from '../secrets/secret-restore.ts';
import type { ServiceDeps } from '../services/deps.ts';
import { mayKnowProject } from '../services/project-visibility.ts';
import type { WriteContext } from '../services/unit-of-work.ts';
import type { ReadOnlyDb } from '../db/database.ts';
import { planRestore } from './restore-plan.ts';

/** How deep a recursive restore goes (as recursive listings). */
const MAX_RESTORE_DEPTH = 20;

export interface SnapshotPlace {
  environment: string;
  secretPath: string;
}

export interface RestoreInput extends SnapshotPlace {
  recursive: boolean;
  revision?: number;
  at?: Date;
}

/**
 * Point-in-time state of folders: each committed secret write to a folder is a snapshot (its change-feed revision),
 * readable and restorable as one new change.
 */
export class SnapshotService {
  readonly #deps: ServiceDeps;

  constructor(deps: ServiceDeps) {
    this.#deps = deps;
  }

  /** A folder's snapshots (the revisions of the secret writes to it), newest first. */
  async list(actor: Actor, projectId: string, place: SnapshotPlace & { limit: number; offset: number }) {
    const { db } = this.#deps;
    const { project, environment, path } = await this.#readPlace(db, actor, projectId, place);
    const folder = await this.#deps.lookups.requireFolder(db, environment, path);
    const changes = await listFolderSecretChanges(db, { projectId: project.id, environmentId: environment.id, secretPath: path }, place);
    return changes.map((change) => toSnapshot(change, folder.id, folder.parentId));
  }

  async count(actor: Actor, projectId: string, place: SnapshotPlace): Promise<number> {
    const { db } = this.#deps;
    const { project, environment, path } = await this.#readPlace(db, actor, projectId, place);
    await this.#deps.lookups.requireFolder(db, environment, path);
    return countFolderSecretChanges(db, { projectId: project.id, environmentId: environment.id, secretPath: path });
  }

  /** One snapshot: the folder's shared secrets as they stood at its revision, with values. */
  async get(actor: Actor, snapshotId: string) {
    const { db } = this.#deps;
    const change = await this.#requireSnapshotChange(db, actor, snapshotId);
    const { project, environment, path } = await this.#readPlace(db, actor, change.projectId, { environment: change.environmentSlug!, secretPath: change.secretPath! });
    const folder = await this.#deps.lookups.requireFolder(db, environment, path);
    const cipher = new SecretCipher(this.#deps.keyring, project);
    const states = await listSecretStatesAt(db, [folder.id], change.revision);
    return {
      ...toSnapshot(change, folder.id, folder.parentId),
      environment: { id: environment.id, slug: environment.slug, name: environment.name },
      secretPath: path,
      secretVersions: states.map((state) => ({
        id: state.id,
        secretId: state.secretId,
        version: state.version,
        secretKey: state.key,
        secretValue: cipher.open(state.secretId, 'value', state.encryptedValue),
        secretComment: cipher.open(state.secretId, 'comment', state.encryptedComment),
        skipMultilineEncoding: state.skipMultilineEncoding,
        tagIds: state.tagIds,
      })),
    };
  }

  /** Restores the folder a snapshot is of (not its subfolders) to the snapshot's state, as one new change. */
  async rollback(actor: Actor, snapshotId: string) {
    const change = await this.#requireSnapshotChange(this.#deps.db, actor, snapshotId);
    const restored = await this.restore(actor, change.projectId, {
      environment: change.environmentSlug!,
      secretPath: change.secretPath!,
      recursive: false,
      revision: change.revision,
    });
    return { ...toSnapshot(change, restored.folders[0]!.folderId, null), restored: restored.folders[0]! };
  }

  /**
   * Restores an environment's folder (and, recursive, every folder below it) to the state at a revision or time, in
   * one transaction recorded as one new change per folder that changed: reversible by restoring the revision before it.
   * Folders deleted since are recreated and folders made since are removed (restore-plan.ts), which also asks for
   * `secret-folders` create or delete at the restored path.
   */
  async restore(actor: Actor, projectId: string, input: RestoreInput) {
    const path = normalizeSecretPath(input.secretPath);
    return this.#deps.unitOfWork.write(actor, async (tx) => {
      const project = await tx.project({ id: projectId }, { lock: true });
      await tx.authorize({ project, action: 'create', subject: 'secret-rollback' });
      const where = { environment: input.environment, secretPath: path };
      await tx.authorize({ project, action: 'edit', subject: 'secrets', where });
      const environment = await this.#deps.lookups.requireEnvironment(tx.db, project.id, input.environment);
      const revision = await restoreRevision(tx, input, await this.#deps.changes.latestRevision(tx.db));
      const plan = await planRestore(tx.db, environment, path, input.recursive ? MAX_RESTORE_DEPTH : 0, revision);
      if (plan.targets.some((target) => !target.currentId)) await tx.authorize({ project, action: 'create', subject: 'secret-folders', where });
      if (plan.remove.length > 0) await tx.authorize({ project, action: 'delete', subject: 'secret-folders', where });
      const results = [];
      const recreatedFolders: string[] = [];
      for (const target of plan.targets) {
        const folder = target.currentId
          ? await this.#deps.lookups.requireFolder(tx.db, environment, target.path)
          : await this.#recreateFolder(tx, project, environment, target.path, recreatedFolders);
        const states = (await listSecretStatesAt(tx.db, [target.sourceId], revision)).map((state) => ({ ...state, folderId: folder.id }));
        const counts = await this.#restoreFolder(tx, project, environment, { folder, path: target.path }, states);
        results.push({ folderId: folder.id, secretPath: target.path, ...counts });
      }
      for (const place of plan.remove) {
        const folder = await this.#deps.lookups.requireFolder(tx.db, environment, place.path);
        const counts = await this.#restoreFolder(tx, project, environment, { folder, path: place.path }, []);
        await removeFolder(tx.db, folder.id);
        tx.change(folderChange(project, environment, place.path));
        results.push({ folderId: folder.id, secretPath: place.path, ...counts });
      }
      const removedFolders = plan.remove.map((place) => place.path);
      tx.audit({
        project,
        type: 'restore-secrets',
        metadata: { environment: environment.slug, secretPath: path, recursive: input.recursive, revision, folders: results, recreatedFolders, removedFolders },
      });
      return { revision, environment: environment.slug, secretPath: path, folders: results, recreatedFolders, removedFolders };
    });
  }

  /** Makes the folder at `path` (and any missing parent) again, under new ids; each one made is a folder change. */
  async #recreateFolder(tx: WriteContext, project: Project, environment: Environment, path: string, recreated: string[]): Promise<Folder> {
    const { folder, made } = await makeFolderPath(tx.db, environment, parseSecretPath(path));
    for (const madePath of made) tx.change(folderChange(project, environment, madePath));
    recreated.push(...made);
    return folder;
  }

  /**
   * Restores one folder's shared secrets to `states`. A restore that changes a place an approval policy protects is
   * a direct write there: refused (403 ApprovalRequired, the whole restore rolled back) unless a soft policy lets the
   * caller (a machine identity) through, which the audit entry records. A restore that leaves the protected place as
   * it is passes.
   */
  async #restoreFolder(
    tx: WriteContext,
    project: Project,
    environment: Environment,
    place: { folder: Folder; path: string },
    states: SecretState[],
  ): Promise<RestoreCounts & Partial<ApprovalBypass>> {
    const scope = { project, environment, folder: place.folder, path: place.path, cipher: new SecretCipher(this.#deps.keyring, project) };
    const counts = await restoreFolderSecrets(tx, scope, states);
    if (counts.created + counts.updated + counts.deleted === 0) return counts;
    const bypass = await directWriteAllowance(
      tx,
      scope,
      'restore it through a change request (a batch write of the old values, as a user), or ask an admin to lift the policy',
    );
    return { ...counts, ...bypass };
  }

  /** The change row a snapshot id names; one in a project the actor may not know is not found either. */
  async #requireSnapshotChange(db: ReadOnlyDb, actor: Actor, snapshotId: string): Promise<ChangeRecord> {
    const revision = /^[1-9][0-9]{0,15}$/.test(snapshotId) ? Number(snapshotId) : undefined;
    const change = revision === undefined ? undefined : await findChange(db, revision);
    if (
      !change ||
      change.kind !== 'secret' ||
      change.environmentSlug === null ||
      change.secretPath === null ||
      !(await mayKnowProject(this.#deps, db, actor, change.projectId))
    ) {
      throw new NotFoundError(`Secret snapshot with ID '${snapshotId}' not found`);
    }
    return change;
  }

  async #readPlace(db: ReadOnlyDb, actor: Actor, projectId: string, place: SnapshotPlace) {
    const path = normalizeSecretPath(place.secretPath);
    const project = await this.#deps.lookups.requireProject(db, { id: projectId });
    await this.#deps.permissions.assertProject({ actor, project, action: 'read', subject: 'secret-rollback' });
    await this.#deps.permissions.assertProject({ actor, project, action: 'read', subject: 'secrets', where: { environment: place.environment, secretPath: path } });
    const environment = await this.#deps.lookups.requireEnvironment(db, project.id, place.environment);
    return { project, environment, path };
  }
}

/** The revision a restore goes back to: given, or the newest at the given time; never one not yet committed. */
async function restoreRevision(tx: WriteContext, input: RestoreInput, latest: number): Promise<number> {
  if ((input.revision === undefined) === (input.at === undefined)) throw new BadRequestError('Give exactly one of revision and at', 'RestorePoint');
  const revision = input.revision ?? (await findRevisionAt(tx.db, input.at!));
  if (revision > latest) throw new BadRequestError(`Revision ${revision} is newer than the newest one (${latest})`, 'RevisionAhead');
  return revision;
}

function folderChange(project: Project, environment: Environment, secretPath: string): Change {
  return { projectId: project.id, environmentId: environment.id, environmentSlug: environment.slug, secretPath, kind: 'folder' };
}

function toSnapshot(change: ChangeRecord, folderId: string, parentFolderId: string | null) {
  return {
    id: String(change.revision),
    revision: Number(change.revision),
    envId: change.environmentId!,
    folderId,
    parentFolderId,
    createdAt: change.createdAt.toISOString(),
    updatedAt: change.createdAt.toISOString(),
  };
}
