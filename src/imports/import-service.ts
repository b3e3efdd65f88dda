import type { Actor } from '../actor/actor.ts';
import { projectScope } from '../audit/audit-service.ts';
import type { Change } from '../changes/change-feed.ts';
import type { Environment, Folder, Project } from '../db/schema.ts';
import { BadRequestError, NotFoundError } from '../errors.ts';
import { folderLocation } from '../folders/folder-lookup.ts';
import { normalizeSecretPath } from '../folders/secret-path.ts';
import type { ServiceDeps } from '../services/deps.ts';
import type { WriteContext } from '../services/unit-of-work.ts';
import { MAX_IMPORT_DEPTH, toSecretImportResponse } from './import-schema.ts';
import {
  deleteImport,
  findImportById,
  findImportBySource,
  type ImportEdge,
  type ImportRow,
  insertImport,
  listImportEdges,
  listImportsOfFolder,
  maxImportPosition,
  shiftImportPositions,
  updateImport,
} from './import-store.ts';
import { mayKnowProject } from '../services/project-visibility.ts';
import type { Executor, ReadOnlyDb } from '../db/database.ts';

interface ImportLocation {
  projectId: string;
  environment: string;
  path: string;
}

/** A place in the import graph: an environment and a normalized path (the folder need not exist). */
interface Place {
  environment: { id: string; slug: string };
  path: string;
}

interface Destination extends Place {
  project: Project;
  environment: Environment;
  folder: Folder;
}

type Action = 'read' | 'create' | 'edit' | 'delete';

const placeKey = (place: Place) => `${place.environment.id}:${place.path}`;
const describePlace = (place: Place) => `${place.environment.slug}:${place.path}`;
const sourceOf = (row: ImportRow): Place => ({ environment: { id: row.importEnv, slug: row.importEnvSlug }, path: row.importPath });

/** The chain from `from` to `to` following imports breadth-first, or undefined; each place is visited once. */
function findImportChain(edges: ImportEdge[], from: Place, to: Place): Place[] | undefined {
  const imports = new Map<string, Place[]>();
  for (const edge of edges) {
    const key = placeKey({ environment: { id: edge.envId, slug: edge.envSlug }, path: edge.folderPath });
    const source = { environment: { id: edge.importEnvId, slug: edge.importEnvSlug }, path: edge.importPath };
    imports.set(key, [...(imports.get(key) ?? []), source]);
  }
  const previous = new Map<string, Place | null>([[placeKey(from), null]]);
  const queue = [from];
  for (let current = queue.shift(); current; current = queue.shift()) {
    if (placeKey(current) === placeKey(to)) return traceBack(previous, current);
    for (const next of imports.get(placeKey(current)) ?? []) {
      if (previous.has(placeKey(next))) continue;
      previous.set(placeKey(next), current);
      queue.push(next);
    }
  }
  return undefined;
}

/** Places each place imports (forward) or is imported by (backward). */
function importGraph(edges: ImportEdge[]): { forward: Map<string, string[]>; backward: Map<string, string[]> } {
  const forward = new Map<string, string[]>();
  const backward = new Map<string, string[]>();
  for (const edge of edges) {
    const importer = `${edge.envId}:${edge.folderPath}`;
    const source = `${edge.importEnvId}:${edge.importPath}`;
    forward.set(importer, [...(forward.get(importer) ?? []), source]);
    backward.set(source, [...(backward.get(source) ?? []), importer]);
  }
  return { forward, backward };
}

/** The longest chain of imports leaving `start` along `next` (the graph is acyclic: cycles are refused). */
function longestChain(next: Map<string, string[]>, start: string, memo = new Map<string, number>()): number {
  const known = memo.get(start);
  if (known !== undefined) return known;
  memo.set(start, 0);
  let longest = 0;
  for (const place of next.get(start) ?? []) longest = Math.max(longest, 1 + longestChain(next, place, memo));
  memo.set(start, longest);
  return longest;
}

function traceBack(previous: Map<string, Place | null>, end: Place): Place[] {
  const chain: Place[] = [];
  for (let place: Place | null | undefined = end; place; place = previous.get(placeKey(place))) chain.unshift(place);
  return chain;
}

export class ImportService {
  readonly #deps: ServiceDeps;

  constructor(deps: ServiceDeps) {
    this.#deps = deps;
  }

  async create(actor: Actor, input: ImportLocation & { source: { environment: string; path: string }; isReplication?: boolean }) {
    if (input.isReplication) throw new BadRequestError('Secret replication is not supported', 'ReplicationNotSupported');
    return this.#deps.unitOfWork.write(actor, async (tx) => {
      const destination = await this.#destination(tx, input, 'create');
      const source = await this.#resolveSource(tx.db, destination.project, input.source);
      await this.#assertAcceptable(tx.db, destination, source);
      const position = (await maxImportPosition(tx.db, destination.folder.id)) + 1;
      const { id } = await insertImport(tx.db, {
        folderId: destination.folder.id,
        importEnv: source.environment.id,
        importPath: source.path,
        position,
      });
      tx.audit({
        project: destination.project,
        type: 'create-secret-import',
        metadata: { secretImportId: id, folderId: destination.folder.id, ...this.#endpoints(destination, source) },
      });
      tx.change(this.#change(destination));
      return toSecretImportResponse((await findImportById(tx.db, id))!);
    });
  }

  async update(actor: Actor, importId: string, input: ImportLocation & { changes: { environment?: string; path?: string; position?: number } }) {
    return this.#deps.unitOfWork.write(actor, async (tx) => {
      const destination = await this.#destination(tx, input, 'edit');
      const current = await this.#requireInFolder(tx.db, importId, destination);
      const previous = sourceOf(current);
      const source = await this.#resolveSource(tx.db, destination.project, {
        environment: input.changes.environment ?? previous.environment,
        path: input.changes.path ?? previous.path,
      });
      const sourceChanged = placeKey(source) !== placeKey(previous);
      if (sourceChanged) await this.#assertAcceptable(tx.db, destination, source);
      const position = await this.#makeRoomAt(tx.db, current, input.changes.position);
      const changed = sourceChanged || position !== current.position;
      if (changed) await updateImport(tx.db, current.id, { importEnv: source.environment.id, importPath: source.path, position });
      tx.audit({
        project: destination.project,
        type: 'update-secret-import',
        metadata: { secretImportId: current.id, folderId: current.folderId, position, ...this.#endpoints(destination, source) },
      });
      if (changed) tx.change(this.#change(destination));
      return toSecretImportResponse((await findImportById(tx.db, current.id))!);
    });
  }

  /** Shifts the imports between the current and the requested position (clamped to the last) by one; returns the new position. */
  async #makeRoomAt(db: Executor, current: ImportRow, requested: number | undefined): Promise<number> {
    if (requested === undefined) return current.position;
    const target = Math.min(requested, await maxImportPosition(db, current.folderId));
    if (target < current.position) await shiftImportPositions(db, current.folderId, target, current.position - 1, 1);
    if (target > current.position) await shiftImportPositions(db, current.folderId, current.position + 1, target, -1);
    return target;
  }

  async delete(actor: Actor, importId: string, input: ImportLocation) {
    return this.#deps.unitOfWork.write(actor, async (tx) => {
      const destination = await this.#destination(tx, input, 'delete');
      const current = await this.#requireInFolder(tx.db, importId, destination);
      await deleteImport(tx.db, current.id);
      await shiftImportPositions(tx.db, current.folderId, current.position + 1, null, -1);
      tx.audit({
        project: destination.project,
        type: 'delete-secret-import',
        metadata: { secretImportId: current.id, folderId: current.folderId, ...this.#endpoints(destination, sourceOf(current)) },
      });
      tx.change(this.#change(destination));
      return toSecretImportResponse(current);
    });
  }

  async list(actor: Actor, input: ImportLocation) {
    const { db, audit, lookups, permissions } = this.#deps;
    const project = await lookups.requireProject(db, { id: input.projectId });
    const path = normalizeSecretPath(input.path);
    await permissions.assertProject({ actor, project, action: 'read', subject: 'secrets', where: { environment: input.environment, secretPath: path } });
    const destination = await this.#folderOf(db, project, input.environment, path);
    const rows = await listImportsOfFolder(db, destination.folder.id);
    await audit.recordRead(actor, projectScope(destination.project), {
      type: 'get-secret-imports',
      metadata: { environment: destination.environment.slug, folderId: destination.folder.id, numberOfImports: rows.length },
    });
    return rows.map(toSecretImportResponse);
  }

  async get(actor: Actor, importId: string) {
    const { db, permissions, audit, lookups } = this.#deps;
    const row = await findImportById(db, importId);
    if (!row || !(await mayKnowProject(this.#deps, db, actor, row.projectId))) throw new NotFoundError(`Secret import with ID '${importId}' not found`);
    const project = await lookups.requireProject(db, { id: row.projectId });
    const { environment, secretPath } = await folderLocation(db, row.folderId);
    await permissions.assertProject({ actor, project, action: 'read', subject: 'secrets', where: { environment, secretPath } });
    await audit.recordRead(actor, projectScope(project), {
      type: 'get-secret-import',
      metadata: { secretImportId: row.id, folderId: row.folderId },
    });
    return toSecretImportResponse(row);
  }

  /** The destination folder; writes lock the project row, so import changes in a project are serialized. */
  async #destination(tx: WriteContext, location: ImportLocation, action: Exclude<Action, 'read'>): Promise<Destination> {
    const project = await tx.project({ id: location.projectId }, { lock: true });
    const path = normalizeSecretPath(location.path);
    await tx.authorize({ project, action, subject: 'secrets', where: { environment: location.environment, secretPath: path } });
    return this.#folderOf(tx.db, project, location.environment, path);
  }

  async #folderOf(db: ReadOnlyDb, project: Project, environmentSlug: string, path: string): Promise<Destination> {
    const { lookups } = this.#deps;
    const environment = await lookups.requireEnvironment(db, project.id, environmentSlug);
    const folder = await lookups.requireFolder(db, environment, path);
    return { project, environment, folder, path };
  }

  /** The source environment by slug (404 if unknown) and the normalized path; an environment object passes through. */
  async #resolveSource(db: Executor, project: Project, source: { environment: string | Place['environment']; path: string }): Promise<Place> {
    const path = normalizeSecretPath(source.path);
    const environment = typeof source.environment === 'string' ? await this.#deps.lookups.requireEnvironment(db, project.id, source.environment) : source.environment;
    return { environment, path };
  }

  async #requireInFolder(db: Executor, importId: string, destination: Destination): Promise<ImportRow> {
    const row = await findImportById(db, importId);
    if (!row || row.folderId !== destination.folder.id) {
      throw new NotFoundError(`Secret import with ID '${importId}' not found in '${destination.path}' of environment '${destination.environment.slug}'`);
    }
    return row;
  }

  /** Rejects importing a folder into itself, importing the same source twice, and any import cycle. */
  async #assertAcceptable(db: Executor, destination: Destination, source: Place): Promise<void> {
    if (placeKey(source) === placeKey(destination)) {
      throw new BadRequestError(`A folder cannot import itself (${describePlace(source)})`, 'SelfImport');
    }
    if (await findImportBySource(db, destination.folder.id, source.environment.id, source.path)) {
      throw new BadRequestError(`${describePlace(source)} is already imported into ${describePlace(destination)}`, 'DuplicateImport');
    }
    const edges = await listImportEdges(db, destination.project.id);
    const chain = findImportChain(edges, source, destination);
    if (chain) {
      throw new BadRequestError(`Cyclic import not allowed: ${[destination, ...chain].map(describePlace).join(' → ')}`, 'CyclicImport');
    }
    const { forward, backward } = importGraph(edges);
    const depth = longestChain(backward, placeKey(destination)) + 1 + longestChain(forward, placeKey(source));
    if (depth > MAX_IMPORT_DEPTH) {
      throw new BadRequestError(
        `This import would make a chain of ${depth} imports; chains are at most ${MAX_IMPORT_DEPTH} long (${describePlace(destination)} ← ${describePlace(source)})`,
        'ImportChainTooDeep',
      );
    }
  }

  #endpoints(destination: Destination, source: Place) {
    return {
      importFromEnvironment: source.environment.slug,
      importFromSecretPath: source.path,
      importToEnvironment: destination.environment.slug,
      importToSecretPath: destination.path,
    };
  }

  #change(destination: Destination): Change {
    return {
      projectId: destination.project.id,
      environmentId: destination.environment.id,
      environmentSlug: destination.environment.slug,
      secretPath: destination.path,
      kind: 'import',
    };
  }
}
