import type { Actor } from '../actor/actor.ts';
import type { Executor } from '../db/database.ts';
import type { Project, ProjectRole } from '../db/schema.ts';
import { BadRequestError, NotFoundError } from '../errors.ts';
import { type Action, isBuiltInProjectRole, type PermissionRule } from '../permissions/permission-rules.ts';
import type { ServiceDeps } from '../services/deps.ts';
import type { WriteContext } from '../services/unit-of-work.ts';
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
    return this.#write(actor, projectRef, 'create', input.permissions, input.slug, async (tx, project) => {
      const created = await insertRole(tx.db, project.id, { ...input, description: input.description ?? null });
      auditRole(tx, project, 'create-project-role', created);
      return created;
    });
  }

  async update(actor: Actor, projectRef: string, roleId: string, changes: Partial<RoleInput>) {
    if (changes.slug !== undefined) assertCustomSlug(changes.slug);
    return this.#write(actor, projectRef, 'edit', changes.permissions ?? [], changes.slug, async (tx, project) => {
      const current = await requireRole(tx.db, project, roleId);
      const values: Partial<RoleValues> = { ...changes, description: changes.description };
      if (values.description === undefined) delete values.description;
      if (Object.values(values).every((value) => value === undefined)) return current;
      const updated = await updateRole(tx.db, current.id, values);
      auditRole(tx, project, 'update-project-role', updated);
      return updated;
    });
  }

  async delete(actor: Actor, projectRef: string, roleId: string) {
    return this.#write(actor, projectRef, 'delete', [], undefined, async (tx, project) => {
      const current = await requireRole(tx.db, project, roleId);
      if (await isRoleAssigned(tx.db, current.id)) {
        throw new BadRequestError(`Role '${current.slug}' is assigned to project members; change their roles first`, 'RoleInUse');
      }
      await deleteRole(tx.db, current.id);
      auditRole(tx, project, 'delete-project-role', current);
      return current;
    });
  }

  async list(actor: Actor, projectRef: string) {
    const { db } = this.#deps;
    const project = await this.#authorizeRead(actor, projectRef);
    return [...builtInRoleResponses(project), ...(await listRoles(db, project.id)).map(toRoleResponse)];
  }

  async getBySlug(actor: Actor, projectRef: string, slug: string) {
    const { db } = this.#deps;
    const project = await this.#authorizeRead(actor, projectRef);
    const builtIn = builtInRoleResponses(project).find((role) => role.slug === slug);
    if (builtIn) return builtIn;
    const [role] = await findRolesBySlugs(db, project.id, [slug]);
    if (!role) throw new NotFoundError(`Role with slug '${slug}' not found`);
    return toRoleResponse(role);
  }

  async #authorizeRead(actor: Actor, projectRef: string): Promise<Project> {
    const { db, lookups, permissions } = this.#deps;
    const project = await lookups.requireProject(db, { orgId: actor.orgId, idOrSlug: projectRef });
    await permissions.assertProject({ actor, project, action: 'read', subject: 'role' });
    return project;
  }

  /** Permission on `role`, and the rules written must not exceed the caller's own; a slug the project has is a 400. */
  #write(
    actor: Actor,
    projectRef: string,
    action: Exclude<Action, 'read'>,
    rules: PermissionRule[],
    slug: string | undefined,
    work: (tx: WriteContext, project: Project) => Promise<ProjectRole>,
  ) {
    const duplicate = () => new BadRequestError(`A role with the slug '${slug}' already exists in this project`, 'DuplicateRoleSlug');
    return this.#deps.unitOfWork.write(
      actor,
      async (tx) => {
        const project = await tx.project({ orgId: actor.orgId, idOrSlug: projectRef });
        const held = await tx.authorize({ project, action, subject: 'role' });
        this.#deps.permissions.assertCovers(held, rules, ESCALATION);
        return toRoleResponse(await work(tx, project));
      },
      { conflicts: slug === undefined ? {} : { project_roles_slug_key: duplicate } },
    );
  }
}

function auditRole(tx: WriteContext, project: Project, type: string, role: ProjectRole): void {
  tx.audit({ project, type, metadata: { roleId: role.id, slug: role.slug, name: role.name } });
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
