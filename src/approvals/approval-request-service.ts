import { randomBytes, randomUUID } from 'node:crypto';
import type { Actor } from '../actor/actor.ts';
import type { Project, SecretApprovalPolicy, SecretApprovalRequest, SecretApprovalRequestSecret } from '../db/schema.ts';
import { AppError, BadRequestError, ForbiddenError, NotFoundError } from '../errors.ts';
import { folderLocation } from '../folders/folder-lookup.ts';
import { approvalPolicyAt } from '../secrets/protected-places.ts';
import { applySecretEdits, editBase, editConflicts, type SecretEdit } from '../secrets/secret-edits.ts';
import { assertReferencesReadable } from '../secrets/secret-references.ts';
import { normalizeSecretKey, normalizeSecretValue } from '../secrets/secret-schema.ts';
import { resolveSecretScope, type SecretLocation, type SecretScope } from '../secrets/secret-scope.ts';
import { findSecret, type SecretType } from '../secrets/secret-store.ts';
import { uniqueKeys } from '../secrets/secret-batch-service.ts';
import { secretExists } from '../secrets/secret-service.ts';
import { SecretCipher } from '../secrets/secret-cipher.ts';
import type { ServiceDeps } from '../services/deps.ts';
import { mayKnowProject } from '../services/project-visibility.ts';
import type { WriteContext } from '../services/unit-of-work.ts';
import { environmentOf, toPolicyView } from './approval-policy-service.ts';
import type { ApprovalRequestView, DetailedApprovalRequest, ListedApprovalRequest } from './approval-schema.ts';
import {
  countRequests,
  findPolicy,
  findRequest,
  findRevisionOfXact,
  insertRequest,
  listPolicyApprovers,
  listRequests,
  listRequestSecrets,
  listReviews,
  type RequestStatus,
  type NewRequestSecret,
  type ReviewStatus,
  updateRequest,
  upsertReview,
} from './approval-store.ts';
import type { ReadOnlyDb } from '../db/database.ts';

/** One secret's write proposed at a protected place (shared unless `type` says personal). */
export interface ProposedWrite {
  op: SecretEdit['op'];
  secretName: string;
  type?: SecretType;
  newSecretName?: string;
  secretValue?: string;
  secretComment?: string;
  skipMultilineEncoding?: boolean;
  tagIds?: string[];
}

const ACTION_OF = { create: 'create', update: 'edit', delete: 'delete' } as const;

/** Change requests: proposed by a user's write to a protected place, reviewed, closed, reopened and merged. */
export class ApprovalRequestService {
  readonly #deps: ServiceDeps;

  constructor(deps: ServiceDeps) {
    this.#deps = deps;
  }

  /**
   * A user's shared writes (one secret, or a batch) at a place an approval policy protects, made one change request
   * holding every secret (nothing written to the secrets, nothing in the change feed); undefined when no policy
   * protects the place or no write is to a shared secret. Every write is to the same folder and of the same op.
   */
  async proposeIfProtected(actor: Actor, location: SecretLocation, writes: readonly ProposedWrite[]): Promise<ApprovalRequestView | undefined> {
    if (actor.kind !== 'user' || !writes.some((write) => (write.type ?? 'shared') === 'shared')) return undefined;
    return this.#deps.unitOfWork.write(actor, async (tx) => {
      const scope = await resolveSecretScope(this.#deps, tx, location, ACTION_OF[writes[0]!.op]);
      const policy = await approvalPolicyAt(tx, scope);
      if (!policy) return undefined;
      assertProposable(scope, policy, writes);
      const keys = uniqueKeys(writes.map((write) => write.secretName));
      uniqueKeys(writes.flatMap((write) => (write.newSecretName ? [write.newSecretName] : [])));
      const rows: NewRequestSecret[] = [];
      for (const [index, write] of writes.entries()) rows.push(await proposedRow(tx, scope, keys[index]!, write));
      const values = writes.flatMap((write) => (write.secretValue === undefined ? [] : [normalizeSecretValue(write.secretValue)]));
      if (values.length > 0) await assertReferencesReadable(tx, scope, values);
      const request = await insertRequest(
        tx.db,
        { projectId: scope.project.id, policyId: policy.id, folderId: scope.folder.id, slug: requestSlug(), committerUserId: actor.id },
        rows,
      );
      tx.audit({
        project: scope.project,
        type: 'secret-approval-request',
        metadata: { ...requestAudit(request, scope), committedBy: actor.id, policyId: policy.id, secretKeys: keys },
      });
      return toRequestView(request);
    });
  }

  async list(
    actor: Actor,
    projectId: string,
    filter: { environment?: string; status?: RequestStatus; committer?: string; limit: number; offset: number },
  ): Promise<ListedApprovalRequest[]> {
    const { db } = this.#deps;
    const project = await this.#authorizeRead(db, actor, projectId);
    const environmentId = filter.environment ? (await this.#deps.lookups.requireEnvironment(db, project.id, filter.environment)).id : undefined;
    const requests = await listRequests(db, project.id, { ...filter, environmentId });
    return Promise.all(requests.map((request) => this.#listed(db, request)));
  }

  async count(actor: Actor, projectId: string): Promise<{ open: number; closed: number }> {
    const project = await this.#authorizeRead(this.#deps.db, actor, projectId);
    return countRequests(this.#deps.db, project.id);
  }

  /** A request with its diff: the proposed values and the secrets as they are now (the caller must read secrets there). */
  async get(actor: Actor, requestId: string): Promise<DetailedApprovalRequest> {
    const { db } = this.#deps;
    const request = await this.#requireRequest(db, requestId, actor);
    const project = await this.#authorizeRead(db, actor, request.projectId);
    const location = await folderLocation(db, request.folderId);
    await this.#deps.permissions.assertProject({ actor, project, action: 'read', subject: 'secrets', where: location });
    const listed = await this.#listed(db, request);
    const cipher = new SecretCipher(this.#deps.keyring, project);
    const secrets = await listRequestSecrets(db, request.id);
    const commits = await Promise.all(
      secrets.map(async (row) => {
        const current = await findSecret(db, request.folderId, row.secretKey, 'shared', null);
        return {
          op: row.op,
          secretKey: row.secretKey,
          newSecretKey: row.newSecretKey,
          ...(row.encryptedValue ? { secretValue: cipher.open(row.id, 'value', row.encryptedValue) } : {}),
          ...(row.encryptedComment ? { secretComment: cipher.open(row.id, 'comment', row.encryptedComment) } : {}),
          skipMultilineEncoding: row.skipMultilineEncoding,
          secretVersion: row.secretVersion,
          secret: current
            ? {
                id: current.id,
                secretKey: current.key,
                secretValue: cipher.open(current.id, 'value', current.encryptedValue),
                secretComment: cipher.open(current.id, 'comment', current.encryptedComment),
                version: current.version,
              }
            : null,
        };
      }),
    );
    return { ...listed, commits };
  }

  /** An approver's approval or rejection of an open request (the committer cannot review their own). */
  async review(actor: Actor, requestId: string, status: ReviewStatus) {
    return this.#onRequest(actor, requestId, async (tx, request, project, approvers) => {
      if (!approvers.includes(actor.id)) throw new ForbiddenError('Only the approvers of the policy may review this request', 'NotAnApprover');
      if (actor.id === request.committerUserId) throw new ForbiddenError('The committer of a request cannot review it', 'SelfReview');
      assertOpen(request);
      const review = await upsertReview(tx.db, request.id, actor.id, status);
      tx.audit({ project, type: 'review-secret-approval-request', metadata: { ...(await requestAuditAt(tx, request)), reviewer: actor.id, status } });
      return { id: `${review.requestId}:${review.reviewerUserId}`, requestId: review.requestId, reviewerUserId: review.reviewerUserId, status: review.status };
    });
  }

  /** Closes an open request, or reopens a closed one that was not merged (the committer or an approver). */
  async setStatus(actor: Actor, requestId: string, status: 'open' | 'close'): Promise<ApprovalRequestView> {
    return this.#onRequest(actor, requestId, async (tx, request, project, approvers) => {
      assertParticipant(actor, request, approvers);
      if (request.hasMerged) throw new BadRequestError('The request was merged: it cannot be reopened or closed', 'RequestMerged');
      const next = status === 'open' ? 'open' : 'closed';
      if (request.status === next) throw new BadRequestError(`The request is already ${next}`, 'RequestStatusUnchanged');
      const updated = await updateRequest(tx.db, request.id, { status: next, statusChangedByUserId: actor.id });
      tx.audit({
        project,
        type: next === 'open' ? 'secret-approval-reopened' : 'secret-approval-closed',
        metadata: { ...(await requestAuditAt(tx, updated)), changedBy: actor.id },
      });
      return toRequestView(updated);
    });
  }

  /**
   * Applies the whole request in one transaction, when enough approvers approved and none rejected (or, under a soft
   * policy, an approver gives a bypass reason); 409 without writing anything when a secret changed meanwhile.
   */
  async merge(actor: Actor, requestId: string, input: { bypassReason?: string }): Promise<ApprovalRequestView> {
    return this.#onRequest(actor, requestId, async (tx, request, project, approvers) => {
      assertParticipant(actor, request, approvers);
      assertOpen(request);
      const policy = (await findPolicy(tx.db, request.policyId))!;
      const reviews = await listReviews(tx.db, request.id);
      if (reviews.some((review) => review.status === 'rejected')) throw new BadRequestError('An approver rejected the request', 'RequestRejected');
      const approved = reviews.filter((review) => review.status === 'approved' && approvers.includes(review.reviewerUserId)).length;
      const bypass = approved < policy.approvals ? bypassReasonFor(actor, policy, approvers, input.bypassReason, approved) : null;
      const location = await folderLocation(tx.db, request.folderId);
      const scope = await resolveSecretScope(this.#deps, tx, { projectId: project.id, ...location }, 'edit');
      const edits = (await listRequestSecrets(tx.db, request.id)).map((row) => toEdit(row, scope));
      const conflicts = await editConflicts(tx, scope, edits);
      if (conflicts.length > 0) {
        throw new AppError(
          409,
          'MergeConflict',
          `Secrets changed since the request was made: ${conflicts.map((conflict) => conflict.secretKey).join(', ')}; close it and make a new one`,
          { conflicts },
        );
      }
      await applySecretEdits(tx, scope, edits);
      const merged = await updateRequest(tx.db, request.id, {
        hasMerged: true,
        status: 'closed',
        statusChangedByUserId: actor.id,
        bypassReason: bypass,
        conflicts: '[]',
        merged: true,
      });
      tx.audit({
        project,
        type: 'secret-approval-merged',
        metadata: { ...requestAudit(merged, scope), mergedBy: actor.id, ...(bypass ? { bypassReason: bypass } : {}) },
      });
      return toRequestView(merged);
    });
  }

  /** A write on one request: the caller must be a user who may read the project's requests; the request is locked. */
  #onRequest<T>(actor: Actor, requestId: string, work: (tx: WriteContext, request: SecretApprovalRequest, project: Project, approvers: string[]) => Promise<T>) {
    return this.#deps.unitOfWork.write(actor, async (tx) => {
      const found = await this.#requireRequest(tx.db, requestId, actor);
      const project = await tx.project({ id: found.projectId });
      await tx.authorize({ project, action: 'read', subject: 'secret-approval' });
      if (actor.kind !== 'user') throw new ForbiddenError('Only users review, close, reopen and merge change requests', 'UserRequired');
      const request = (await findRequest(tx.db, requestId, { lock: true }))!;
      const approvers = (await listPolicyApprovers(tx.db, [request.policyId])).get(request.policyId) ?? [];
      return work(tx, request, project, approvers);
    });
  }

  async #authorizeRead(db: ReadOnlyDb, actor: Actor, projectId: string): Promise<Project> {
    const project = await this.#deps.lookups.requireProject(db, { id: projectId });
    await this.#deps.permissions.assertProject({ actor, project, action: 'read', subject: 'secret-approval' });
    return project;
  }

  /** The request; one in a project the actor may not know is not found either. */
  async #requireRequest(db: ReadOnlyDb, requestId: string, actor: Actor): Promise<SecretApprovalRequest> {
    const request = await findRequest(db, requestId);
    if (!request || !(await mayKnowProject(this.#deps, db, actor, request.projectId)))
      throw new NotFoundError(`Secret approval request with ID '${requestId}' not found`);
    return request;
  }

  async #listed(db: ReadOnlyDb, request: SecretApprovalRequest): Promise<ListedApprovalRequest> {
    const policy = (await findPolicy(db, request.policyId))!;
    const approvers = (await listPolicyApprovers(db, [policy.id])).get(policy.id) ?? [];
    const policyView = toPolicyView(policy, await environmentOf(db, policy), approvers);
    const location = await folderLocation(db, request.folderId);
    const reviews = await listReviews(db, request.id);
    const secrets = await listRequestSecrets(db, request.id);
    return {
      ...toRequestView(request),
      environment: location.environment,
      secretPath: location.secretPath,
      mergedRevision: await findRevisionOfXact(db, request.mergedXact),
      policy: {
        id: policyView.id,
        name: policyView.name,
        approvals: policyView.approvals,
        enforcementLevel: policyView.enforcementLevel,
        secretPath: policyView.secretPath,
        approvers: policyView.approvers,
      },
      reviewers: reviews.map((review) => ({ userId: review.reviewerUserId, status: review.status })),
      commits: secrets.map((row) => ({ op: row.op, secretKey: row.secretKey, newSecretKey: row.newSecretKey })),
    };
  }
}

/** Refuses what a request cannot hold: tags (a write of their own) and personal secrets beside shared ones (two batches). */
function assertProposable(scope: SecretScope, policy: SecretApprovalPolicy, writes: readonly ProposedWrite[]): void {
  if (writes.some((write) => write.tagIds?.length))
    throw new BadRequestError(`'${scope.path}' is protected by an approval policy: change tags with a write of their own`, 'TagsNeedDirectWrite');
  if (writes.some((write) => write.type === 'personal'))
    throw new BadRequestError(
      `The batch mixes shared secrets, which '${scope.path}' in environment '${scope.environment.slug}' protects by the approval policy '${policy.name}', with personal ones, which it does not: split it into one batch of each`,
      'BatchNeedsSplit',
    );
}

/** One secret of a request: the proposed fields, sealed to the row, and the version they were proposed against. */
async function proposedRow(tx: WriteContext, scope: SecretScope, key: string, write: ProposedWrite): Promise<NewRequestSecret> {
  const base = await editBase(tx, scope, key);
  if (write.op === 'create' && base) throw secretExists(key, scope.path);
  if (write.op !== 'create' && !base) throw new NotFoundError(`Secret with name '${key}' not found in '${scope.path}'`);
  const value = write.secretValue === undefined ? undefined : normalizeSecretValue(write.secretValue);
  const id = randomUUID();
  const newKey = write.newSecretName === undefined ? null : normalizeSecretKey(write.newSecretName);
  return {
    id,
    op: write.op,
    secretKey: key,
    newSecretKey: newKey === key ? null : newKey,
    secretId: base?.secretId ?? null,
    secretVersion: base?.version ?? null,
    encryptedValue: value === undefined ? null : scope.cipher.seal(id, 'value', value),
    encryptedComment: write.secretComment === undefined ? null : scope.cipher.seal(id, 'comment', write.secretComment.trim()),
    skipMultilineEncoding: write.skipMultilineEncoding ?? null,
  };
}

function requestSlug(): string {
  return randomBytes(5).toString('hex');
}

function assertOpen(request: SecretApprovalRequest): void {
  if (request.hasMerged) throw new BadRequestError('The request was already merged', 'RequestMerged');
  if (request.status !== 'open') throw new BadRequestError('The request is closed: reopen it first', 'RequestClosed');
}

function assertParticipant(actor: Actor, request: SecretApprovalRequest, approvers: readonly string[]): void {
  if (actor.id !== request.committerUserId && !approvers.includes(actor.id)) {
    throw new ForbiddenError('Only the committer and the approvers of the policy may do this', 'NotAParticipant');
  }
}

/** The audited reason for merging with fewer approvals than the policy needs; 400 when none is allowed. */
function bypassReasonFor(
  actor: Actor,
  policy: { approvals: number; enforcementLevel: string },
  approvers: readonly string[],
  reason: string | undefined,
  approved: number,
): string {
  if (policy.enforcementLevel === 'soft' && approvers.includes(actor.id) && reason?.trim()) return reason.trim();
  throw new BadRequestError(`The request has ${approved} of the ${policy.approvals} approvals it needs`, 'NotEnoughApprovals');
}

function toEdit(row: SecretApprovalRequestSecret, scope: SecretScope): SecretEdit {
  return {
    op: row.op,
    key: row.secretKey,
    newKey: row.newSecretKey,
    value: row.encryptedValue ? scope.cipher.open(row.id, 'value', row.encryptedValue) : undefined,
    comment: row.encryptedComment ? scope.cipher.open(row.id, 'comment', row.encryptedComment) : undefined,
    skipMultilineEncoding: row.skipMultilineEncoding,
    base: row.secretId === null || row.secretVersion === null ? null : { secretId: row.secretId, version: row.secretVersion },
  };
}

function requestAudit(request: SecretApprovalRequest, scope: Pick<SecretScope, 'environment' | 'path'>) {
  return { secretApprovalRequestId: request.id, secretApprovalRequestSlug: request.slug, environment: scope.environment.slug, secretPath: scope.path };
}

async function requestAuditAt(tx: WriteContext, request: SecretApprovalRequest) {
  const location = await folderLocation(tx.db, request.folderId);
  return { secretApprovalRequestId: request.id, secretApprovalRequestSlug: request.slug, environment: location.environment, secretPath: location.secretPath };
}

export function toRequestView(request: SecretApprovalRequest): ApprovalRequestView {
  return {
    id: request.id,
    policyId: request.policyId,
    hasMerged: request.hasMerged,
    status: request.status,
    conflicts: request.conflicts as ApprovalRequestView['conflicts'],
    slug: request.slug,
    folderId: request.folderId,
    createdAt: request.createdAt.toISOString(),
    updatedAt: request.updatedAt.toISOString(),
    isReplicated: false,
    committerUserId: request.committerUserId,
    statusChangedByUserId: request.statusChangedByUserId,
    bypassReason: request.bypassReason,
  };
}
