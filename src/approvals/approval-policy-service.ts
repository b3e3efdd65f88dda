import type { Actor } from '../actor/actor.ts';
import type { Environment, Project, SecretApprovalPolicy } from '../db/schema.ts';
import { findEnvironmentById } from '../environments/environment-store.ts';
import { BadRequestError, NotFoundError } from '../errors.ts';
import { normalizeSecretPath } from '../folders/secret-path.ts';
import { pathGlobProblem } from '../patterns/patterns.ts';
import type { Action } from '../permissions/permission-service.ts';
import type { ServiceDeps } from '../services/deps.ts';
import { mayKnowProject } from '../services/project-visibility.ts';
import type { WriteContext } from '../services/unit-of-work.ts';
import type { ApprovalPolicyView } from './approval-schema.ts';
import { deletePolicy, findPolicy, insertPolicy, listPolicies, listPolicyApprovers, listProjectMemberUsers, setPolicyApprovers, updatePolicy } from './approval-store.ts';
import type { Executor, ReadOnlyDb } from '../db/database.ts';

export interface PolicyInput {
  name: string;
  environment: string;
  secretPath: string;
  approvers: { type: 'user'; id: string }[];
  approvals: number;
  enforcementLevel: 'hard' | 'soft';
}

export type PolicyUpdate = Partial<Omit<PolicyInput, 'environment'>>;

/** Approval policies: which places of an environment need approved change requests, by whom, how many. */
export class ApprovalPolicyService {
  readonly #deps: ServiceDeps;

  constructor(deps: ServiceDeps) {
    this.#deps = deps;
  }

  async create(actor: Actor, projectId: string, input: PolicyInput): Promise<ApprovalPolicyView> {
    return this.#write(actor, projectId, 'create', input.name, async (tx, project) => {
      const environment = await this.#deps.lookups.requireEnvironment(tx.db, project.id, input.environment);
      const approvers = await requireApprovers(tx.db, project, input.approvers, input.approvals);
      const policy = await insertPolicy(tx.db, {
        projectId: project.id,
        environmentId: environment.id,
        name: input.name,
        secretPath: policyPath(input.secretPath),
        approvals: input.approvals,
        enforcementLevel: input.enforcementLevel,
      });
      await setPolicyApprovers(tx.db, policy.id, approvers);
      tx.audit({ project, type: 'create-secret-approval-policy', metadata: policyAudit(policy, environment, approvers) });
      return toPolicyView(policy, environment, approvers);
    });
  }

  async list(actor: Actor, projectId: string): Promise<ApprovalPolicyView[]> {
    const { db } = this.#deps;
    const project = await this.#authorize(db, actor, projectId, 'read');
    const policies = await listPolicies(db, project.id);
    const approvers = await listPolicyApprovers(
      db,
      policies.map((policy) => policy.id),
    );
    return Promise.all(policies.map(async (policy) => toPolicyView(policy, await environmentOf(db, policy), approvers.get(policy.id) ?? [])));
  }

  async update(actor: Actor, policyId: string, input: PolicyUpdate): Promise<ApprovalPolicyView> {
    const policy = await this.#requirePolicy(this.#deps.db, policyId, actor);
    return this.#write(actor, policy.projectId, 'edit', input.name, async (tx, project) => {
      const current = await this.#requirePolicy(tx.db, policyId);
      const currentApprovers = (await listPolicyApprovers(tx.db, [current.id])).get(current.id) ?? [];
      const approvals = input.approvals ?? current.approvals;
      const approvers = await requireApprovers(tx.db, project, input.approvers ?? currentApprovers.map((id) => ({ type: 'user' as const, id })), approvals);
      const updated = await updatePolicy(tx.db, current.id, {
        name: input.name,
        secretPath: input.secretPath === undefined ? undefined : policyPath(input.secretPath),
        approvals: input.approvals,
        enforcementLevel: input.enforcementLevel,
      });
      if (input.approvers) await setPolicyApprovers(tx.db, current.id, approvers);
      const environment = await environmentOf(tx.db, updated);
      tx.audit({ project, type: 'update-secret-approval-policy', metadata: policyAudit(updated, environment, approvers) });
      return toPolicyView(updated, environment, approvers);
    });
  }

  async delete(actor: Actor, policyId: string): Promise<ApprovalPolicyView> {
    const policy = await this.#requirePolicy(this.#deps.db, policyId, actor);
    return this.#write(actor, policy.projectId, 'delete', undefined, async (tx, project) => {
      const current = await this.#requirePolicy(tx.db, policyId);
      const approvers = (await listPolicyApprovers(tx.db, [current.id])).get(current.id) ?? [];
      const environment = await environmentOf(tx.db, current);
      await deletePolicy(tx.db, current.id);
      tx.audit({ project, type: 'delete-secret-approval-policy', metadata: policyAudit(current, environment, approvers) });
      return toPolicyView(current, environment, approvers);
    });
  }

  #write<T>(actor: Actor, projectId: string, action: Exclude<Action, 'read'>, name: string | undefined, work: (tx: WriteContext, project: Project) => Promise<T>) {
    return this.#deps.unitOfWork.write(
      actor,
      async (tx) => {
        const project = await tx.project({ id: projectId });
        await tx.authorize({ project, action, subject: 'secret-approval' });
        return work(tx, project);
      },
      {
        conflicts: name === undefined ? {} : { secret_approval_policies_name_key: () => new BadRequestError(`Approval policy '${name}' already exists`, 'PolicyExists') },
      },
    );
  }

  async #authorize(db: ReadOnlyDb, actor: Actor, projectId: string, action: Action): Promise<Project> {
    const project = await this.#deps.lookups.requireProject(db, { id: projectId });
    await this.#deps.permissions.assertProject({ actor, project, action, subject: 'secret-approval' });
    return project;
  }

  /** The policy; with `actor`, one in a project the actor may not know is not found either. */
  async #requirePolicy(db: ReadOnlyDb, policyId: string, actor?: Actor): Promise<SecretApprovalPolicy> {
    const policy = await findPolicy(db, policyId);
    if (!policy || (actor && !(await mayKnowProject(this.#deps, db, actor, policy.projectId)))) throw policyNotFound(policyId);
    return policy;
  }
}

export function policyNotFound(policyId: string): NotFoundError {
  return new NotFoundError(`Secret approval policy with ID '${policyId}' not found`);
}

/** A path glob as stored: validated by the linear matcher, a plain path normalised. */
function policyPath(glob: string): string {
  const problem = pathGlobProblem(glob);
  if (problem) throw new BadRequestError(`secretPath ${problem}`, 'InvalidPattern');
  return /[*?[\]{}!()]/.test(glob) ? glob : normalizeSecretPath(glob);
}

/** The approvers' user ids: members of the project, at least as many as the approvals needed. */
async function requireApprovers(db: Executor, project: Project, approvers: PolicyInput['approvers'], approvals: number): Promise<string[]> {
  const ids = [...new Set(approvers.map((approver) => approver.id))];
  const members = new Set(await listProjectMemberUsers(db, project.id, ids));
  const strangers = ids.filter((id) => !members.has(id));
  if (strangers.length > 0) throw new BadRequestError(`Approvers must be users who are members of the project: ${strangers.join(', ')}`, 'ApproverNotMember');
  if (approvals > ids.length) throw new BadRequestError(`The policy needs ${approvals} approvals but names ${ids.length} approvers`, 'TooFewApprovers');
  return ids.sort();
}

export async function environmentOf(db: ReadOnlyDb, policy: SecretApprovalPolicy): Promise<Environment> {
  const environment = await findEnvironmentById(db, policy.environmentId);
  if (!environment) throw policyNotFound(policy.id);
  return environment;
}

export function toPolicyView(policy: SecretApprovalPolicy, environment: Environment, approvers: readonly string[]): ApprovalPolicyView {
  return {
    id: policy.id,
    name: policy.name,
    projectId: policy.projectId,
    envId: environment.id,
    environment: { id: environment.id, slug: environment.slug, name: environment.name },
    secretPath: policy.secretPath,
    approvals: policy.approvals,
    enforcementLevel: policy.enforcementLevel,
    approvers: approvers.map((id) => ({ type: 'user' as const, id })),
    createdAt: policy.createdAt.toISOString(),
    updatedAt: policy.updatedAt.toISOString(),
  };
}

function policyAudit(policy: SecretApprovalPolicy, environment: Environment, approvers: readonly string[]) {
  return {
    policyId: policy.id,
    name: policy.name,
    environment: environment.slug,
    secretPath: policy.secretPath,
    approvals: policy.approvals,
    enforcementLevel: policy.enforcementLevel,
    approvers,
  };
}
