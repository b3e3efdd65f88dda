import { randomUUID } from 'node:crypto';
import type { Actor } from '../actor/actor.ts';
import { ProjectCipher } from '../crypto/project-cipher.ts';
import type { AppConnection, Project } from '../db/schema.ts';
import { BadRequestError, NotFoundError } from '../errors.ts';
import type { Action } from '../permissions/permission-service.ts';
import type { ServiceDeps } from '../services/deps.ts';
import type { WriteContext } from '../services/unit-of-work.ts';
import {
  type AppConnectionResponse,
  type CreatePostgresConnectionInput,
  POSTGRES_APP,
  type PostgresCredentialsInput,
  toAppConnectionResponse,
  type UpdatePostgresConnectionInput,
  USERNAME_AND_PASSWORD,
} from './app-connection-schema.ts';
import {
  deleteAppConnection,
  findAppConnectionById,
  findAppConnectionByName,
  insertAppConnection,
  isAppConnectionInUse,
  listAppConnections,
  updateAppConnection,
} from './app-connection-store.ts';
import { type PostgresCredentials, verifyPostgresConnection } from './postgres-server.ts';
import type { ReadOnlyDb } from '../db/database.ts';

/** The associated data binding a connection's sealed credentials to its row. */
function context(connectionId: string): string {
  return `coffer:app-connection:${connectionId}:credentials`;
}

export function sealConnectionCredentials(deps: Pick<ServiceDeps, 'keyring'>, project: Project, connectionId: string, credentials: PostgresCredentialsInput): Buffer {
  return new ProjectCipher(deps.keyring, project).seal(context(connectionId), JSON.stringify(credentials));
}

export function openConnectionCredentials(deps: Pick<ServiceDeps, 'keyring'>, project: Project, connection: AppConnection): PostgresCredentials {
  return JSON.parse(new ProjectCipher(deps.keyring, project).open(context(connection.id), connection.encryptedCredentials)) as PostgresCredentials;
}

function connectionNotFound(reference: string): NotFoundError {
  return new NotFoundError(`PostgreSQL connection '${reference}' not found`, 'AppConnectionNotFound');
}

function duplicateName(name: string): BadRequestError {
  return new BadRequestError(`A PostgreSQL connection named '${name}' already exists in the project`, 'AppConnectionExists');
}

/** The project's PostgreSQL connection with this id; 404 when missing or another project's. */
export async function requireProjectConnection(db: ReadOnlyDb, project: Project, connectionId: string): Promise<AppConnection> {
  const connection = await findAppConnectionById(db, connectionId);
  if (!connection || connection.projectId !== project.id || connection.app !== POSTGRES_APP) throw connectionNotFound(connectionId);
  return connection;
}

/** Connections to PostgreSQL servers, per project; their credentials are sealed with the project's key and never answered. */
export class AppConnectionService {
  readonly #deps: ServiceDeps;
  readonly #verify: (credentials: PostgresCredentials) => Promise<void>;

  constructor(deps: ServiceDeps, verify = verifyPostgresConnection) {
    this.#deps = deps;
    this.#verify = verify;
  }

  async create(actor: Actor, input: CreatePostgresConnectionInput): Promise<AppConnectionResponse> {
    // permission before the sign-in: nobody makes Coffer reach a server in a project they may not configure
    await this.#authorize(actor, input.projectId, 'create');
    await this.#verify(input.credentials);
    return this.#write(actor, input.projectId, 'create', input.name, async (tx, project) => {
      const id = randomUUID();
      const row = await insertAppConnection(tx.db, {
        id,
        projectId: project.id,
        name: input.name,
        description: input.description ?? null,
        app: POSTGRES_APP,
        method: USERNAME_AND_PASSWORD,
        encryptedCredentials: sealConnectionCredentials(this.#deps, project, id, input.credentials),
      });
      tx.audit({ project, type: 'create-app-connection', metadata: { connectionId: id, app: POSTGRES_APP, name: row.name } });
      return toAppConnectionResponse(row, input.credentials);
    });
  }

  async list(actor: Actor, projectId: string): Promise<AppConnectionResponse[]> {
    const project = await this.#authorize(actor, projectId, 'read');
    const rows = await listAppConnections(this.#deps.db, project.id, POSTGRES_APP);
    return rows.map((row) => toAppConnectionResponse(row, openConnectionCredentials(this.#deps, project, row)));
  }

  async get(actor: Actor, connectionId: string): Promise<AppConnectionResponse> {
    const row = await findAppConnectionById(this.#deps.db, connectionId);
    if (!row || row.app !== POSTGRES_APP) throw connectionNotFound(connectionId);
    const project = await this.#authorizeOr404(actor, row.projectId, connectionId);
    return toAppConnectionResponse(row, openConnectionCredentials(this.#deps, project, row));
  }

  async getByName(actor: Actor, projectId: string, name: string): Promise<AppConnectionResponse> {
    const project = await this.#authorize(actor, projectId, 'read');
    const row = await findAppConnectionByName(this.#deps.db, project.id, name);
    if (!row || row.app !== POSTGRES_APP) throw connectionNotFound(name);
    return toAppConnectionResponse(row, openConnectionCredentials(this.#deps, project, row));
  }

  async update(actor: Actor, connectionId: string, input: UpdatePostgresConnectionInput): Promise<AppConnectionResponse> {
    const projectId = await this.#projectOf(connectionId);
    await this.#authorizeOr404(actor, projectId, connectionId, 'edit');
    if (input.credentials) await this.#verify(input.credentials);
    return this.#write(actor, projectId, 'edit', input.name, async (tx, project) => {
      const current = await requireProjectConnection(tx.db, project, connectionId);
      const row = await updateAppConnection(tx.db, current.id, {
        name: input.name,
        description: input.description,
        encryptedCredentials: input.credentials ? sealConnectionCredentials(this.#deps, project, current.id, input.credentials) : undefined,
      });
      const changed = Object.keys(input).filter((key) => input[key as keyof UpdatePostgresConnectionInput] !== undefined);
      tx.audit({ project, type: 'update-app-connection', metadata: { connectionId: row.id, app: POSTGRES_APP, name: row.name, changed } });
      return toAppConnectionResponse(row, input.credentials ?? openConnectionCredentials(this.#deps, project, row));
    });
  }

  async delete(actor: Actor, connectionId: string): Promise<AppConnectionResponse> {
    const projectId = await this.#projectOf(connectionId);
    await this.#authorizeOr404(actor, projectId, connectionId, 'delete');
    return this.#write(actor, projectId, 'delete', undefined, async (tx, project) => {
      const current = await requireProjectConnection(tx.db, project, connectionId);
      if (await isAppConnectionInUse(tx.db, current.id)) {
        throw new BadRequestError(`PostgreSQL connection '${current.name}' is used by a secret rotation: delete the rotation first`, 'AppConnectionInUse');
      }
      await deleteAppConnection(tx.db, current.id);
      tx.audit({ project, type: 'delete-app-connection', metadata: { connectionId: current.id, app: POSTGRES_APP, name: current.name } });
      return toAppConnectionResponse(current, openConnectionCredentials(this.#deps, project, current));
    });
  }

  async #projectOf(connectionId: string): Promise<string> {
    const row = await findAppConnectionById(this.#deps.db, connectionId);
    if (!row || row.app !== POSTGRES_APP) throw connectionNotFound(connectionId);
    return row.projectId;
  }

  #write<T>(actor: Actor, projectId: string, action: Exclude<Action, 'read'>, name: string | undefined, work: (tx: WriteContext, project: Project) => Promise<T>) {
    return this.#deps.unitOfWork.write(
      actor,
      async (tx) => {
        const project = await tx.project({ id: projectId });
        await tx.authorize({ project, action, subject: 'app-connections' });
        return work(tx, project);
      },
      { conflicts: name === undefined ? {} : { app_connections_name_key: () => duplicateName(name) } },
    );
  }

  async #authorize(actor: Actor, projectId: string, action: Action): Promise<Project> {
    const project = await this.#deps.lookups.requireProject(this.#deps.db, { id: projectId });
    await this.#deps.permissions.assertProject({ actor, project, action, subject: 'app-connections' });
    return project;
  }

  /** A connection in a project the caller cannot see answers like one that does not exist. */
  async #authorizeOr404(actor: Actor, projectId: string, connectionId: string, action: Action = 'read'): Promise<Project> {
    try {
      return await this.#authorize(actor, projectId, action);
    } catch (error) {
      if (error instanceof NotFoundError) throw connectionNotFound(connectionId);
      throw error;
    }
  }
}
