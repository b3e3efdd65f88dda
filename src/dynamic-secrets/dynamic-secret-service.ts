import type { Actor } from '../actor/actor.ts';
import type { ServiceDeps } from '../services/deps.ts';
import type { WriteContext } from '../services/unit-of-work.ts';
import {
  auditPlace,
  checkTtls,
  duplicateName,
  type DynamicSecretPlace,
  openInputs,
  requireDynamicSecret,
  resolvePlace,
  type ResolvedPlace,
  sealInputs,
} from './dynamic-secret-lookup.ts';
import { type DynamicSecretResponse, type PostgresInputs, postgresInputsSchema, toDynamicSecretResponse } from './dynamic-secret-schema.ts';
import { deleteDynamicSecret, insertDynamicSecret, listDynamicSecrets, updateDynamicSecret } from './dynamic-secret-store.ts';
import { revokeAllLeases } from './lease-revoker.ts';

export interface DynamicSecretInput {
  name: string;
  provider: { type: 'sql-database'; inputs: PostgresInputs };
  defaultTTL: string;
  maxTTL?: string | null;
}

export interface DynamicSecretChanges {
  inputs?: Partial<PostgresInputs>;
  defaultTTL?: string;
  maxTTL?: string | null;
  newName?: string;
}

/**
 * Dynamic secrets: a PostgreSQL admin connection and the statement templates its leases run. Configuring one is
 * `dynamic-secrets` create/edit/delete (the built-in admin role only): its templates run with the admin credentials
 * against the customer's database, so they are never a member's to write.
 */
function toVisibleInputs({ password: _password, ca: _ca, ...visible }: PostgresInputs) {
  return visible;
}

export class DynamicSecretService {
  readonly #deps: ServiceDeps;

  constructor(deps: ServiceDeps) {
    this.#deps = deps;
  }

  async create(actor: Actor, place: DynamicSecretPlace, input: DynamicSecretInput): Promise<DynamicSecretResponse> {
    checkTtls(input.defaultTTL, input.maxTTL);
    return this.#write(actor, place, 'create', input.name, async (tx, at) => {
      const created = await insertDynamicSecret(tx.db, {
        projectId: at.project.id,
        folderId: at.folder.id,
        name: input.name,
        type: input.provider.type,
        defaultTtl: input.defaultTTL,
        maxTtl: input.maxTTL ?? null,
        encryptedInputs: sealInputs(this.#deps, at.project, input.provider.inputs),
      });
      tx.audit({ project: at.project, type: 'create-dynamic-secret', metadata: auditPlace(at, created) });
      return toDynamicSecretResponse(created);
    });
  }

  async update(actor: Actor, place: DynamicSecretPlace, name: string, changes: DynamicSecretChanges): Promise<DynamicSecretResponse> {
    return this.#write(actor, place, 'edit', changes.newName, async (tx, at) => {
      const current = await requireDynamicSecret(tx.db, at.folder, name);
      const defaultTtl = changes.defaultTTL ?? current.defaultTtl;
      const maxTtl = changes.maxTTL === undefined ? current.maxTtl : changes.maxTTL;
      checkTtls(defaultTtl, maxTtl);
      const inputs = changes.inputs ? postgresInputsSchema.parse({ ...openInputs(this.#deps, at.project, current), ...changes.inputs }) : undefined;
      const updated = await updateDynamicSecret(tx.db, current.id, {
        name: changes.newName,
        defaultTtl,
        maxTtl,
        encryptedInputs: inputs && sealInputs(this.#deps, at.project, inputs),
      });
      tx.audit({
        project: at.project,
        type: 'update-dynamic-secret',
        metadata: { ...auditPlace(at, updated), oldName: current.name, inputsChanged: inputs !== undefined },
      });
      return toDynamicSecretResponse(updated);
    });
  }

  /** Revokes every lease first; `isForced` deletes even when a revocation fails (its role then stays in the database). */
  async delete(actor: Actor, place: DynamicSecretPlace, name: string, isForced: boolean): Promise<DynamicSecretResponse> {
    const { db } = this.#deps;
    const at = await resolvePlace(this.#deps, db, actor, place);
    await this.#deps.permissions.assertProject({ actor, project: at.project, action: 'delete', subject: 'dynamic-secrets' });
    const current = await requireDynamicSecret(db, at.folder, name);
    await revokeAllLeases(this.#deps, actor, at.project, current, isForced);
    return this.#write(actor, place, 'delete', undefined, async (tx, resolved) => {
      const row = await requireDynamicSecret(tx.db, resolved.folder, name);
      await deleteDynamicSecret(tx.db, row.id);
      tx.audit({ project: resolved.project, type: 'delete-dynamic-secret', metadata: { ...auditPlace(resolved, row), isForced } });
      return toDynamicSecretResponse(row);
    });
  }

  /** The dynamic secret with its inputs, less the admin password and CA. */
  async get(actor: Actor, place: DynamicSecretPlace, name: string) {
    const at = await this.#read(actor, place);
    const row = await requireDynamicSecret(this.#deps.db, at.folder, name);
    return { ...toDynamicSecretResponse(row), inputs: toVisibleInputs(openInputs(this.#deps, at.project, row)) };
  }

  async list(actor: Actor, place: DynamicSecretPlace): Promise<DynamicSecretResponse[]> {
    const at = await this.#read(actor, place);
    return (await listDynamicSecrets(this.#deps.db, at.folder.id)).map(toDynamicSecretResponse);
  }

  async #read(actor: Actor, place: DynamicSecretPlace): Promise<ResolvedPlace> {
    const at = await resolvePlace(this.#deps, this.#deps.db, actor, place);
    await this.#deps.permissions.assertProject({ actor, project: at.project, action: 'read', subject: 'dynamic-secrets' });
    return at;
  }

  #write<T>(
    actor: Actor,
    place: DynamicSecretPlace,
    action: 'create' | 'edit' | 'delete',
    name: string | undefined,
    work: (tx: WriteContext, at: ResolvedPlace) => Promise<T>,
  ) {
    return this.#deps.unitOfWork.write(
      actor,
      async (tx) => {
        const at = await resolvePlace(this.#deps, tx.db, actor, place);
        await tx.authorize({ project: at.project, action, subject: 'dynamic-secrets' });
        return work(tx, at);
      },
      { conflicts: name === undefined ? {} : { dynamic_secrets_folder_name_key: () => duplicateName(name) } },
    );
  }
}
