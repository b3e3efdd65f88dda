import type { Actor } from '../actor/actor.ts';
import { openConnectionCredentials, requireProjectConnection } from '../app-connections/app-connection-service.ts';
import { roleExists, setRolePassword, type PostgresCredentials } from '../app-connections/postgres-server.ts';
import { ProjectCipher } from '../crypto/project-cipher.ts';
import type { Project, SecretRotation } from '../db/schema.ts';
import { AppError, BadRequestError, ConflictError, NotFoundError } from '../errors.ts';
import { normalizeSecretPath } from '../folders/secret-path.ts';
import type { Action } from '../permissions/permission-service.ts';
import type { RotationPhase } from '../changes/change-feed.ts';
import type { SyncBarrier } from '../integrations/sync-barrier.ts';
import { describeWorkload } from '../integrations/workload-rollout.ts';
import { SecretCipher } from '../secrets/secret-cipher.ts';
import type { SecretScope } from '../secrets/secret-scope.ts';
import { putSharedSecrets, readSharedSecrets } from '../secrets/secret-writer.ts';
import type { ServiceDeps } from '../services/deps.ts';
import type { Caller, WriteContext } from '../services/unit-of-work.ts';
import { DEFAULT_PASSWORD_REQUIREMENTS, generatePassword, generateSecret, type GeneratedValue } from './generators.ts';
import {
  type CreateGeneratedRotationInput,
  type CreatePostgresRotationInput,
  GENERATED_SECRET,
  type GeneratedParameters,
  type GeneratedSecretsMapping,
  KEY_PAIR_KINDS,
  POSTGRES_CREDENTIALS,
  type PostgresSecretsMapping,
  type RotateAtUtc,
  type RotationType,
  type SecretRotationResponse,
  type UpdateRotationInput,
} from './rotation-schema.ts';
import { nextRotationAt } from './rotation-schedule.ts';
import {
  deleteRotation,
  findLastRevisionAt,
  findRotationById,
  findRotationByName,
  insertRotation,
  listDueRotationIds,
  listRotations,
  lockRotation,
  type RotationRow,
  updateRotation,
} from './rotation-store.ts';
import { rotationAuditMetadata, toRotationResponse } from './rotation-view.ts';

/** How long a run's claim holds: a replica that dies mid-run is taken over after this. */
export const RUN_CLAIM_MS = 2 * 60_000;
/** A scheduled run that failed is tried again after this. */
export const RETRY_AFTER_MS = 10 * 60_000;
/** While a rotation waits for its consumers, a scheduler pass looks again after this. */
export const WAIT_RECHECK_MS = 60_000;
/** Rotations one scheduler pass starts, at most. */
export const RUNS_PER_PASS = 10;

/** Who a scheduled run is recorded as (the audit log's `userAgent`). */
const SCHEDULER: Caller = { ip: null, userAgent: 'coffer/secret-rotation-scheduler', userAgentType: 'other' };

type Credentials = (GeneratedValue | null)[];

interface Claim {
  rotationId: string;
  index: number;
  credential: GeneratedValue;
  claimedUntil: Date;
}

/** Outcomes of runs since start, by type and result (the metrics read them). */
export type RotationOutcomes = Map<string, number>;

function rotationNotFound(reference: string): NotFoundError {
  return new NotFoundError(`Secret rotation '${reference}' not found`, 'SecretRotationNotFound');
}

function duplicateName(name: string): BadRequestError {
  return new BadRequestError(`A secret rotation named '${name}' already exists in the project`, 'SecretRotationExists');
}

function credentialsContext(rotationId: string, part: 'generated-credentials' | 'pending-credentials'): string {
  return `coffer:secret-rotation:${rotationId}:${part}`;
}

/** The message a failed run leaves in status and audit: one of ours (fixed sentences), never a driver's or a value. */
function failureMessage(error: unknown): string {
  if (error instanceof AppError && error.statusCode < 500) return error.message;
  return 'The rotation failed for an internal reason; see the server log';
}

/**
 * Secret rotations: PostgreSQL credentials (two roles taking turns, dual-phase) and generated secrets.
 * A run claims the rotation and records the value it will set (pending) in one transaction, sets it on
 * the server, then publishes it and flips the active index in a second: interrupted anywhere, the next
 * attempt sets the same value again, and the active credential is never the one changed.
 */
export class RotationService {
  readonly #deps: ServiceDeps;
  readonly #barrier: Pick<SyncBarrier, 'check'>;
  readonly #now: () => number;
  readonly outcomes: RotationOutcomes = new Map();

  constructor(deps: ServiceDeps, barrier: Pick<SyncBarrier, 'check'>, clock: () => number = Date.now) {
    this.#deps = deps;
    this.#barrier = barrier;
    this.#now = clock;
  }

  async createPostgres(actor: Actor, input: CreatePostgresRotationInput): Promise<SecretRotationResponse> {
    const project = await this.#deps.lookups.requireProject(this.#deps.db, { id: input.projectId });
    await this.#deps.permissions.assertProject({ actor, project, action: 'create', subject: 'secret-rotation' });
    const connection = await requireProjectConnection(this.#deps.db, project, input.connectionId);
    const server = openConnectionCredentials(this.#deps, project, connection);
    if (input.parameters.username1 === input.parameters.username2) throw new BadRequestError('username1 and username2 must be two different roles', 'InvalidRotation');
    if (input.secretsMapping.username === input.secretsMapping.password)
      throw new BadRequestError('The username and password must map to two different secret keys', 'InvalidRotation');
    for (const role of [input.parameters.username1, input.parameters.username2]) {
      if (!(await roleExists(server, role))) throw new BadRequestError(`Role '${role}' does not exist on the PostgreSQL server`, 'InvalidRotation');
    }
    return this.#create(actor, POSTGRES_CREDENTIALS, input, input.connectionId);
  }

  async createGenerated(actor: Actor, input: CreateGeneratedRotationInput): Promise<SecretRotationResponse> {
    assertMappingFitsKind(input.parameters, input.secretsMapping);
    return this.#create(actor, GENERATED_SECRET, input, null);
  }

  async list(actor: Actor, projectId: string, type?: RotationType): Promise<SecretRotationResponse[]> {
    const project = await this.#authorize(actor, projectId, 'read');
    return (await listRotations(this.#deps.db, project.id, type)).map(toRotationResponse);
  }

  async get(actor: Actor, type: RotationType, rotationId: string): Promise<SecretRotationResponse> {
    return toRotationResponse(await this.#readable(actor, type, rotationId));
  }

  async getByName(actor: Actor, type: RotationType, name: string, where: { projectId: string; environment: string; secretPath: string }) {
    const project = await this.#authorize(actor, where.projectId, 'read');
    const row = await findRotationByName(this.#deps.db, project.id, name);
    if (!row || row.type !== type || row.environmentSlug !== where.environment || row.secretPath !== normalizeSecretPath(where.secretPath)) throw rotationNotFound(name);
    return toRotationResponse(row);
  }

  /** The generated credentials (the active one and the one before): secret values, so reading them needs `read` on the secrets too. */
  async generatedCredentials(actor: Actor, type: RotationType, rotationId: string) {
    const row = await this.#readable(actor, type, rotationId);
    const project = await this.#deps.lookups.requireProject(this.#deps.db, { id: row.projectId });
    await this.#deps.permissions.assertProject({
      actor,
      project,
      action: 'read',
      subject: 'secrets',
      where: { environment: row.environmentSlug, secretPath: row.secretPath },
    });
    const credentials = this.#openCredentials(project, row).filter((credential): credential is GeneratedValue => credential !== null);
    await this.#deps.audit.recordRead(
      actor,
      { orgId: project.orgId, projectId: project.id, projectName: project.name },
      {
        type: 'get-secret-rotation-generated-credentials',
        metadata: rotationAuditMetadata(row),
      },
    );
    return { generatedCredentials: credentials, activeIndex: row.activeIndex, rotationId: row.id, type };
  }

  async update(actor: Actor, type: RotationType, rotationId: string, input: UpdateRotationInput): Promise<SecretRotationResponse> {
    const projectId = (await this.#readable(actor, type, rotationId)).projectId;
    await this.#deps.unitOfWork.write(
      actor,
      async (tx) => {
        const project = await tx.project({ id: projectId });
        await tx.authorize({ project, action: 'edit', subject: 'secret-rotation' });
        const current = await lockRotation(tx.db, rotationId);
        if (!current) throw rotationNotFound(rotationId);
        const interval = input.rotationInterval ?? current.rotationInterval;
        const at = input.rotateAtUtc ?? (current.rotateAtUtc as RotateAtUtc);
        const auto = input.isAutoRotationEnabled ?? current.isAutoRotationEnabled;
        await updateRotation(tx.db, current.id, {
          name: input.name,
          description: input.description,
          consumerWaitMinutes: input.consumerWaitMinutes,
          isAutoRotationEnabled: auto,
          rotationInterval: interval,
          rotateAtUtc: JSON.stringify(at),
          nextRotationAt: auto && current.lastRotatedAt ? nextRotationAt(current.lastRotatedAt, interval, at) : null,
        });
        const changed = Object.keys(input).filter((key) => input[key as keyof UpdateRotationInput] !== undefined);
        tx.audit({ project, type: 'update-secret-rotation', metadata: { ...rotationAuditMetadata(current), changed } });
      },
      { conflicts: input.name ? { secret_rotations_name_key: () => duplicateName(input.name!) } : {} },
    );
    return toRotationResponse(await this.#existing(type, rotationId));
  }

  /** Deletes the rotation; the secrets it wrote and the roles' passwords stay as they are. */
  async delete(actor: Actor, type: RotationType, rotationId: string): Promise<SecretRotationResponse> {
    const row = await this.#readable(actor, type, rotationId);
    await this.#deps.unitOfWork.write(actor, async (tx) => {
      const project = await tx.project({ id: row.projectId });
      await tx.authorize({ project, action: 'delete', subject: 'secret-rotation' });
      const current = await lockRotation(tx.db, rotationId);
      if (!current) throw rotationNotFound(rotationId);
      if (current.runClaimedUntil && current.runClaimedUntil.getTime() > this.#now()) throw runUnderWay();
      await deleteRotation(tx.db, current.id);
      tx.audit({ project, type: 'delete-secret-rotation', metadata: rotationAuditMetadata(row) });
    });
    return toRotationResponse(row);
  }

  /** "Rotate now": a run outside the schedule, by `actor` (`edit` on the rotation). */
  async rotateNow(actor: Actor, type: RotationType, rotationId: string): Promise<SecretRotationResponse> {
    await this.#readable(actor, type, rotationId);
    await this.#run(actor, rotationId, true);
    return toRotationResponse(await this.#existing(type, rotationId));
  }

  /**
   * One scheduler pass: starts (or resumes) the rotations that are due, at most RUNS_PER_PASS, one after
   * another. Each run's claim keeps another replica's pass from running the same rotation.
   */
  async runDue(): Promise<number> {
    const due = await listDueRotationIds(this.#deps.db, new Date(this.#now()), RUNS_PER_PASS);
    let ran = 0;
    for (const id of due) {
      try {
        if (await this.#run(SCHEDULER, id, false)) ran++;
      } catch {
        // recorded on the rotation (status, audit, metric); the pass goes on with the next one
      }
    }
    return ran;
  }

  async #create(actor: Actor, type: RotationType, input: CreatePostgresRotationInput | CreateGeneratedRotationInput, connectionId: string | null) {
    const secretPath = normalizeSecretPath(input.secretPath);
    const created = await this.#deps.unitOfWork.write(
      actor,
      async (tx) => {
        const project = await tx.project({ id: input.projectId });
        await tx.authorize({ project, action: 'create', subject: 'secret-rotation' });
        await tx.authorize({ project, action: 'edit', subject: 'secrets', where: { environment: input.environment, secretPath } });
        const environment = await this.#deps.lookups.requireEnvironment(tx.db, project.id, input.environment);
        const folder = await this.#deps.lookups.requireFolder(tx.db, environment, secretPath);
        const row = await insertRotation(tx.db, {
          projectId: project.id,
          environmentId: environment.id,
          folderId: folder.id,
          secretPath,
          type,
          name: input.name,
          description: input.description ?? null,
          connectionId,
          parameters: JSON.stringify(input.parameters),
          secretsMapping: JSON.stringify(input.secretsMapping),
          isAutoRotationEnabled: input.isAutoRotationEnabled,
          rotationInterval: input.rotationInterval,
          rotateAtUtc: JSON.stringify(input.rotateAtUtc),
          consumerWaitMinutes: input.consumerWaitMinutes,
          rotationStatus: 'success',
        });
        tx.audit({ project, type: 'create-secret-rotation', metadata: rotationAuditMetadata({ ...row, environmentSlug: environment.slug }) });
        return row;
      },
      { conflicts: { secret_rotations_name_key: () => duplicateName(input.name) } },
    );
    // the first run issues the first credential; if it cannot, nothing of the rotation stays
    try {
      await this.#run(actor, created.id, true);
    } catch (error) {
      await this.#deps.unitOfWork.write(actor, async (tx) => {
        tx.authorizedBy('undoing the rotation this caller just created');
        await deleteRotation(tx.db, created.id);
      });
      throw error;
    }
    return toRotationResponse((await findRotationById(this.#deps.db, created.id))!);
  }

  /**
   * "Retire now (I accept the risk)": the previous credential stops working at once, whoever still uses it. The
   * role not in use gets a password nobody is told (PostgreSQL credentials only), and the rotation stops waiting.
   */
  async retireNow(actor: Actor, type: RotationType, rotationId: string): Promise<SecretRotationResponse> {
    const row = await this.#readable(actor, type, rotationId);
    const project = await this.#authorize(actor, row.projectId, 'edit');
    if (row.type !== POSTGRES_CREDENTIALS) throw new BadRequestError('Only PostgreSQL credentials have a previous credential to retire', 'NothingToRetire');
    const previous = this.#openCredentials(project, row)[1 - row.activeIndex];
    if (!previous) throw new BadRequestError('The previous credential is already retired', 'NothingToRetire');
    if (row.runClaimedUntil && row.runClaimedUntil.getTime() > this.#now()) throw runUnderWay();
    const connection = await requireProjectConnection(this.#deps.db, project, row.connectionId!);
    await setRolePassword(openConnectionCredentials(this.#deps, project, connection), previous.username!, generatePassword());
    await this.#deps.unitOfWork.write(actor, async (tx) => {
      await tx.authorize({ project, action: 'edit', subject: 'secret-rotation' });
      const current = await lockRotation(tx.db, rotationId);
      if (!current) throw rotationNotFound(rotationId);
      const kept = this.#openCredentials(project, current);
      kept[1 - current.activeIndex] = null;
      await updateRotation(tx.db, current.id, {
        encryptedGeneratedCredentials: this.#sealCredentials(project, current.id, kept),
        rotationStatus: 'success',
        lastRotationMessage: null,
        waitingFor: null,
        waitingSince: null,
        nextRotationAt:
          current.isAutoRotationEnabled && current.lastRotatedAt
            ? nextRotationAt(current.lastRotatedAt, current.rotationInterval, current.rotateAtUtc as RotateAtUtc)
            : null,
      });
      tx.audit({ project, type: 'secret-rotation-retired', metadata: { ...rotationAuditMetadata(row), acceptedRisk: true, waitingFor: current.waitingFor ?? [] } });
      tellConsumers(tx, row, 'retired');
    });
    return toRotationResponse(await this.#existing(type, rotationId));
  }

  /** One run: claim, set on the server, publish. Undefined when another run holds the rotation, or it waits for its consumers (scheduled runs only). */
  async #run(caller: Caller, rotationId: string, manual: boolean): Promise<SecretRotation | undefined> {
    const waiting = await this.#consumersPending(rotationId);
    if (waiting.length > 0) {
      await this.#recordWaiting(caller, rotationId, waiting, manual);
      if (manual) throw new ConflictError(`Waiting for consumers to take the current credential: ${waiting.join(', ')}`, 'SecretRotationWaiting');
      return undefined;
    }
    const claim = await this.#claim(caller, rotationId, manual);
    if (!claim) return undefined;
    try {
      await this.#applyOnServer(claim);
      const done = await this.#complete(caller, claim, manual);
      this.#count(done.type, 'completed');
      return done;
    } catch (error) {
      await this.#fail(caller, claim, manual, error);
      throw error instanceof AppError && error.statusCode < 500 ? error : new BadRequestError(failureMessage(error), 'SecretRotationFailed');
    }
  }

  async #claim(caller: Caller, rotationId: string, manual: boolean): Promise<Claim | undefined> {
    return this.#deps.unitOfWork.write(caller, async (tx) => {
      const { row, project } = await this.#lockForRun(tx, rotationId, manual);
      const now = this.#now();
      if (row.runClaimedUntil && row.runClaimedUntil.getTime() > now) {
        if (manual) throw runUnderWay();
        return undefined;
      }
      const cipher = new ProjectCipher(this.#deps.keyring, project);
      const resumed = row.pendingIndex !== null && row.encryptedPendingCredentials !== null;
      const index = resumed ? row.pendingIndex! : row.encryptedGeneratedCredentials === null ? row.activeIndex : 1 - row.activeIndex;
      const credential = resumed
        ? (JSON.parse(cipher.open(credentialsContext(row.id, 'pending-credentials'), row.encryptedPendingCredentials!)) as GeneratedValue)
        : newCredential(row, index);
      const claimedUntil = new Date(now + RUN_CLAIM_MS);
      await updateRotation(tx.db, row.id, {
        waitingFor: null,
        waitingSince: null,
        pendingIndex: index,
        encryptedPendingCredentials: cipher.seal(credentialsContext(row.id, 'pending-credentials'), JSON.stringify(credential)),
        runClaimedUntil: claimedUntil,
        rotationStatus: 'rotating',
        lastRotationAttemptedAt: new Date(now),
      });
      tx.audit({ project, type: 'secret-rotation-started', metadata: { ...rotationAuditMetadata(row), index, manual, resumed } });
      return { rotationId: row.id, index, credential, claimedUntil };
    });
  }

  /** PostgreSQL: the inactive role gets the new password (the active one is never touched). Generated secrets: nothing outside Coffer. */
  async #applyOnServer(claim: Claim): Promise<void> {
    const row = await findRotationById(this.#deps.db, claim.rotationId);
    if (!row || row.type !== POSTGRES_CREDENTIALS) return;
    const project = await this.#deps.lookups.requireProject(this.#deps.db, { id: row.projectId });
    const connection = await requireProjectConnection(this.#deps.db, project, row.connectionId!);
    const server: PostgresCredentials = openConnectionCredentials(this.#deps, project, connection);
    await setRolePassword(server, claim.credential.username!, claim.credential.password!);
  }

  async #complete(caller: Caller, claim: Claim, manual: boolean): Promise<SecretRotation> {
    return this.#deps.unitOfWork.write(caller, async (tx) => {
      const row = await this.#lockClaimed(tx, claim);
      const named = (await findRotationById(tx.db, row.id))!;
      const project = await tx.project({ id: row.projectId });
      tx.authorizedBy('the run claimed by this caller');
      const scope = await this.#scope(tx, project, named);
      await putSharedSecrets(tx, scope, await this.#publishedValues(tx, scope, row, claim.credential));
      const credentials = this.#openCredentials(project, row);
      credentials[claim.index] = claim.credential;
      const now = new Date(this.#now());
      const done = await updateRotation(tx.db, row.id, {
        activeIndex: claim.index,
        encryptedGeneratedCredentials: this.#sealCredentials(project, row.id, credentials),
        pendingIndex: null,
        encryptedPendingCredentials: null,
        runClaimedUntil: null,
        rotationStatus: 'success',
        lastRotationMessage: null,
        lastRotatedAt: now,
        isLastRotationManual: manual,
        nextRotationAt: row.isAutoRotationEnabled ? nextRotationAt(now, row.rotationInterval, row.rotateAtUtc as RotateAtUtc) : null,
      });
      tx.audit({ project, type: 'secret-rotation-completed', metadata: { ...rotationAuditMetadata(named), activeIndex: claim.index, manual } });
      tellConsumers(tx, named, 'rotated');
      return done;
    });
  }

  async #fail(caller: Caller, claim: Claim, manual: boolean, error: unknown): Promise<void> {
    const message = failureMessage(error);
    await this.#deps.unitOfWork.write(caller, async (tx) => {
      const row = await lockRotation(tx.db, claim.rotationId);
      tx.authorizedBy('the run claimed by this caller');
      if (!row || row.runClaimedUntil?.getTime() !== claim.claimedUntil.getTime()) return;
      const project = await tx.project({ id: row.projectId });
      const now = this.#now();
      // the pending value stays: the next attempt sets the same one, so a half-done run never leaves two unknown passwords
      await updateRotation(tx.db, row.id, {
        runClaimedUntil: null,
        rotationStatus: 'failed',
        lastRotationMessage: message,
        nextRotationAt: row.isAutoRotationEnabled && !manual ? new Date(now + RETRY_AFTER_MS) : row.nextRotationAt,
      });
      tx.audit({ project, type: 'secret-rotation-failed', metadata: { ...rotationAuditMetadata(row), index: claim.index, manual, reason: message } });
      this.#count(row.type, 'failed');
    });
  }

  /** A run's step on the rotation's row, locked: a manual run needs `edit` on it; a scheduled one was authorized at creation. */
  async #lockForRun(tx: WriteContext, rotationId: string, manual: boolean): Promise<{ row: SecretRotation; project: Project }> {
    const row = await lockRotation(tx.db, rotationId);
    if (!row) throw rotationNotFound(rotationId);
    const project = await tx.project({ id: row.projectId });
    if (manual) await tx.authorize({ project, action: 'edit', subject: 'secret-rotation' });
    else tx.authorizedBy('a scheduled run: authorized when the rotation was created');
    return { row, project };
  }

  async #lockClaimed(tx: WriteContext, claim: Claim): Promise<SecretRotation> {
    const row = await lockRotation(tx.db, claim.rotationId);
    if (!row) throw rotationNotFound(claim.rotationId);
    if (row.runClaimedUntil?.getTime() !== claim.claimedUntil.getTime() || row.pendingIndex !== claim.index) {
      throw new ConflictError('Another run took over this rotation', 'SecretRotationSuperseded');
    }
    return row;
  }

  async #scope(tx: WriteContext, project: Project, row: RotationRow): Promise<SecretScope> {
    const environment = await this.#deps.lookups.requireEnvironment(tx.db, project.id, row.environmentSlug);
    const folder = await this.#deps.lookups.requireFolder(tx.db, environment, row.secretPath);
    return { project, environment, folder, path: row.secretPath, cipher: new SecretCipher(this.#deps.keyring, project) };
  }

  /** The secret keys and values a run writes: the mapped parts of the credential, and the kept previous value where mapped. */
  async #publishedValues(tx: WriteContext, scope: SecretScope, row: SecretRotation, credential: GeneratedValue): Promise<Map<string, string>> {
    if (row.type === POSTGRES_CREDENTIALS) {
      const mapping = row.secretsMapping as PostgresSecretsMapping;
      return new Map([
        [mapping.username, credential.username!],
        [mapping.password, credential.password!],
      ]);
    }
    const mapping = row.secretsMapping as GeneratedSecretsMapping;
    const values = new Map<string, string>();
    const keep = [
      [mapping.value, mapping.previousValue],
      [mapping.publicKey, mapping.previousPublicKey],
    ].filter((pair): pair is [string, string] => pair[0] !== undefined && pair[1] !== undefined);
    const current = await readSharedSecrets(
      tx,
      scope,
      keep.map(([from]) => from),
    );
    for (const [from, to] of keep) if (current.has(from)) values.set(to, current.get(from)!);
    for (const part of ['value', 'privateKey', 'publicKey'] as const) if (mapping[part] && credential[part] !== undefined) values.set(mapping[part], credential[part]);
    return values;
  }

  /**
   * The Integrations that read the rotation's place and do not yet reflect its last write there (synced, and
   * reloaded where they roll workloads), and those whose workloads have not finished rolling out, as their
   * operators report it: names only. None when no run is due to retire anything (the first run, a run under
   * way, or a previous credential already retired).
   */
  async #consumersPending(rotationId: string): Promise<string[]> {
    const row = await findRotationById(this.#deps.db, rotationId);
    if (!row || row.pendingIndex !== null || !row.encryptedGeneratedCredentials) return [];
    const project = await this.#deps.lookups.requireProject(this.#deps.db, { id: row.projectId });
    if (!this.#openCredentials(project, row)[1 - row.activeIndex]) return [];
    const revision = await findLastRevisionAt(this.#deps.db, row.projectId, row.environmentId, row.secretPath);
    if (revision === undefined) return [];
    const change = {
      projectId: row.projectId,
      environmentId: row.environmentId,
      environmentSlug: row.environmentSlug,
      secretPath: row.secretPath,
      kind: 'secret' as const,
    };
    const answer = await this.#barrier.check({ projectId: row.projectId, changes: [{ ...change, revision, createdAt: new Date(0) }] }, revision);
    // only those reading the place are consumers: another team's Integration (and its workloads) never holds, stops or is named here
    return answer.integrations.flatMap((integration) => {
      if (!integration.concerned || integration.state === 'paused') return [];
      const name = `${integration.cluster}/${integration.namespace}/${integration.name}`;
      if (integration.state === 'pending') return [name];
      return integration.rolling.map((workload) => `${name}: ${describeWorkload(workload)} rolling out`);
    });
  }

  /** The rotation waits for `waiting`: status and audit when it starts waiting; failed (and stopped) once it waited past its window. */
  async #recordWaiting(caller: Caller, rotationId: string, waiting: string[], manual: boolean): Promise<void> {
    await this.#deps.unitOfWork.write(caller, async (tx) => {
      const { row, project } = await this.#lockForRun(tx, rotationId, manual);
      const now = this.#now();
      const named = { ...rotationAuditMetadata(row), waitingFor: waiting };
      const place = (await findRotationById(tx.db, row.id))!;
      if (!row.waitingSince) {
        await updateRotation(tx.db, row.id, {
          rotationStatus: 'waiting',
          waitingFor: JSON.stringify(waiting),
          waitingSince: new Date(now),
          nextRotationAt: new Date(now + WAIT_RECHECK_MS),
        });
        tx.audit({ project, type: 'secret-rotation-waiting', metadata: named });
        tellConsumers(tx, place, 'waiting');
        this.#count(row.type, 'waiting');
        return;
      }
      if (now - row.waitingSince.getTime() <= row.consumerWaitMinutes * 60_000) {
        await updateRotation(tx.db, row.id, {
          waitingFor: JSON.stringify(waiting),
          nextRotationAt: row.isAutoRotationEnabled ? new Date(now + WAIT_RECHECK_MS) : row.nextRotationAt,
        });
        return;
      }
      if (row.rotationStatus === 'failed') return;
      const reason = `Consumers did not take the current credential within ${row.consumerWaitMinutes} minutes: ${waiting.join(', ')}; the previous credential stays valid`;
      await updateRotation(tx.db, row.id, { rotationStatus: 'failed', lastRotationMessage: reason, waitingFor: JSON.stringify(waiting), nextRotationAt: null });
      tx.audit({ project, type: 'secret-rotation-failed', metadata: { ...named, reason: 'ConsumersDidNotConverge' } });
      tellConsumers(tx, place, 'stopped');
      this.#count(row.type, 'stalled');
    });
  }

  #sealCredentials(project: Project, rotationId: string, credentials: Credentials): Buffer {
    return new ProjectCipher(this.#deps.keyring, project).seal(credentialsContext(rotationId, 'generated-credentials'), JSON.stringify(credentials));
  }

  #openCredentials(project: Project, row: Pick<SecretRotation, 'id' | 'encryptedGeneratedCredentials'>): Credentials {
    if (!row.encryptedGeneratedCredentials) return [null, null];
    return JSON.parse(
      new ProjectCipher(this.#deps.keyring, project).open(credentialsContext(row.id, 'generated-credentials'), row.encryptedGeneratedCredentials),
    ) as Credentials;
  }

  #count(type: string, outcome: 'completed' | 'failed' | 'waiting' | 'stalled'): void {
    const key = `${type}:${outcome}`;
    this.outcomes.set(key, (this.outcomes.get(key) ?? 0) + 1);
  }

  async #existing(type: RotationType, rotationId: string): Promise<RotationRow> {
    const row = await findRotationById(this.#deps.db, rotationId);
    if (!row || row.type !== type) throw rotationNotFound(rotationId);
    return row;
  }

  /** The rotation, when the caller may read rotations in its project; one it may not see answers like one that does not exist. */
  async #readable(actor: Actor, type: RotationType, rotationId: string): Promise<RotationRow> {
    const row = await this.#existing(type, rotationId);
    try {
      await this.#authorize(actor, row.projectId, 'read');
    } catch (error) {
      if (error instanceof NotFoundError) throw rotationNotFound(rotationId);
      throw error;
    }
    return row;
  }

  async #authorize(actor: Actor, projectId: string, action: Action): Promise<Project> {
    const project = await this.#deps.lookups.requireProject(this.#deps.db, { id: projectId });
    await this.#deps.permissions.assertProject({ actor, project, action, subject: 'secret-rotation' });
    return project;
  }
}

/** A `rotation` change at the rotation's place: the operators of the Integrations reading it record an Event (names only). */
function tellConsumers(tx: WriteContext, row: RotationRow, phase: RotationPhase): void {
  const { projectId, environmentId, environmentSlug, secretPath, name } = row;
  tx.change({ projectId, environmentId, environmentSlug, secretPath, kind: 'rotation', rotation: { rotation: name, phase } });
}

function runUnderWay(): ConflictError {
  return new ConflictError('A run of this rotation is under way', 'SecretRotationRunning');
}

/** The value a run sets: a password for the role at `index`, or a generated secret. */
function newCredential(row: SecretRotation, index: number): GeneratedValue {
  const parameters = row.parameters as Record<string, unknown>;
  if (row.type === POSTGRES_CREDENTIALS) {
    const username = String(parameters[index === 0 ? 'username1' : 'username2']);
    const requirements = (parameters.passwordRequirements as typeof DEFAULT_PASSWORD_REQUIREMENTS | undefined) ?? DEFAULT_PASSWORD_REQUIREMENTS;
    return { username, password: generatePassword(requirements) };
  }
  return generateSecret(parameters as GeneratedParameters);
}

/** Value kinds write `value`; key pairs write `privateKey` and `publicKey`; each kind's keys are distinct. */
function assertMappingFitsKind(parameters: GeneratedParameters, mapping: GeneratedSecretsMapping): void {
  const keyPair = KEY_PAIR_KINDS.includes(parameters.kind);
  const needed = keyPair ? (['privateKey', 'publicKey'] as const) : (['value'] as const);
  const unused = keyPair ? (['value', 'previousValue'] as const) : (['privateKey', 'publicKey', 'previousPublicKey'] as const);
  for (const part of needed) if (!mapping[part]) throw new BadRequestError(`A ${parameters.kind} rotation needs secretsMapping.${part}`, 'InvalidRotation');
  for (const part of unused) if (mapping[part]) throw new BadRequestError(`A ${parameters.kind} rotation has no secretsMapping.${part}`, 'InvalidRotation');
  const keys = Object.values(mapping).filter((key) => key !== undefined);
  if (new Set(keys).size !== keys.length) throw new BadRequestError('Each part must map to a different secret key', 'InvalidRotation');
}
