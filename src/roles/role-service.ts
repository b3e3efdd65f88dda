import type { Actor } from '../actor/actor.ts';
import type { Executor } from '../db/database.ts';
import { isUniqueViolation } from '../db/errors.ts';
import type { Project, ProjectRole } from '../db/schema.ts';
import { BadRequestError, NotFoundError } from '../errors.ts';
import { type Action, isBuiltInProjectRole, type PermissionRule } from '../permissions/permission-rules.ts';
import { requireProjectByIdOrSlug } from '../projects/project-lookup.ts';
import type { ServiceDeps } from '../services/deps.ts';
import { builtInRoleResponses, toRoleResponse } from './role-schema.ts';
import { deleteRole, findRoleById, findRolesBySlugs, insertRole, isRoleAssigned, listRoles, type RoleValues, updateRole } from './role-store.ts';

export interface RoleInput {
  slug: string;
  name: string;
  description?: string | null;
  permissions: PermissionRule[];
}

const ESCALATION = 'Failed to create or update a role with more privileges than your own';

/** Custom project roles: CASL rules with environment and secret path conditions. */
export class RoleService {
  readonly #deps: ServiceDeps;

  constructor(deps: ServiceDeps) {
    this.#deps = deps;
  }

  async create(actor: Actor, projectRef: string, input: RoleInput) {
    assertCustomSlug(input.slug);
    const role = await this.#write(input.slug, async (trx) => {
      const project = await this.#authorize(trx, actor, projectRef, 'create', input.permissions);
      const created = await insertRole(trx, project.id, { ...input, description: input.description ?? null });
      await this.#audit(trx, actor, project, 'create-project-role', created);
      return created;
    });
    return toRoleResponse(role);
  }

  async update(actor: Actor, projectRef: string, roleId: string, changes: Partial<RoleInput>) {
    if (changes.slug !== undefined) assertCustomSlug(changes.slug);
    const role = await this.#write(changes.slug, async (trx) => {
      const project = await this.#authorize(trx, actor, projectRef, 'edit', changes.permissions ?? []);
      const current = await requireRole(trx, project, roleId);
      const values: Partial<RoleValues> = { ...changes, description: changes.description };
      if (values.description === undefined) delete values.description;
      if (Object.values(values).every((value) => value === undefined)) return current;
      const updated = await updateRole(trx, current.id, values);
      await this.#audit(trx, actor, project, 'update-project-role', updated);
      return updated;
    });
    return toRoleResponse(role);
  }

  async delete(actor: Actor, projectRef: string, roleId: string) {
    const role = await this.#deps.db.transaction().execute(async (trx) => {
      const project = await this.#authorize(trx, actor, projectRef, 'delete', []);
      const current = await requireRole(trx, project, roleId);
      if (await isRoleAssigned(trx, current.id)) {
        throw new BadRequestError(`Role '${current.slug}' is assigned to project members; change their roles first`, 'RoleInUse');
      }
      await deleteRole(trx, current.id);
      await this.#audit(trx, actor, project, 'delete-project-role', current);
      return current;
    });
    return toRoleResponse(role);
  }

  async list(actor: Actor, projectRef: string) {
    const { db } = this.#deps;
    const project = await this.#authorize(db, actor, projectRef, 'read', []);
    return [...builtInRoleResponses(project), ...(await listRoles(db, project.id)).map(toRoleResponse)];
  }

  async getBySlug(actor: Actor, projectRef: string, slug: string) {
    const { db } = this.#deps;
    const project = await this.#authorize(db, actor, projectRef, 'read', []);
    const builtIn = builtInRoleResponses(project).find((role) => role.slug === slug);
    if (builtIn) return builtIn;
    const [role] = await findRolesBySlugs(db, project.id, [slug]);
    if (!role) throw new NotFoundError(`Role with slug '${slug}' not found`);
    return toRoleResponse(role);
  }

  /** Permission on `role`, and (for writes) the rules must not exceed the caller's own. */
  async #authorize(db: Executor, actor: Actor, projectRef: string, action: Action, rules: PermissionRule[]): Promise<Project> {
    const { permissions } = this.#deps;
    const project = await requireProjectByIdOrSlug(db, actor.orgId, projectRef);
    const held = await permissions.forProject(actor, project, db);
    held.assert(action, 'role');
    permissions.assertCovers(held, rules, ESCALATION);
    return project;
  }

  async #write(slug: string | undefined, work: (trx: Executor) => Promise<ProjectRole>): Promise<ProjectRole> {
    try {
      return await this.#deps.db.transaction().execute(work);
    } catch (error) {
      if (slug !== undefined && isUniqueViolation(error, 'project_roles_slug_key')) {
        throw new BadRequestError(`A role with the slug '${slug}' already exists in this project`, 'DuplicateRoleSlug');
      }
      throw error;
    }
  }

  async #audit(trx: Executor, actor: Actor, project: Project, type: string, role: ProjectRole): Promise<void> {
    await this.#deps.audit.record(trx, actor, { orgId: project.orgId, projectId: project.id, projectName: project.name }, {
      type,
      metadata: { roleId: role.id, slug: role.slug, name: role.name },
    });
  }
}

function assertCustomSlug(slug: string): void {
  if (isBuiltInProjectRole(slug) || slug === 'custom') {
    throw new BadRequestError(`'${slug}' is the slug of a built-in role`, 'ReservedRoleSlug');
  }
}

async function requireRole(db: Executor, project: Project, roleId: string): Promise<ProjectRole> {
  const role = await findRoleById(db, project.id, roleId);
  if (!role) throw new NotFoundError(`Role with ID '${roleId}' not found`);
  return role;
}
