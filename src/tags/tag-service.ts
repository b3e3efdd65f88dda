import type { Actor } from '../actor/actor.ts';
import type { Change } from '../changes/change-feed.ts';
import type { Executor } from '../db/database.ts';
import { isUniqueViolation } from '../db/errors.ts';
import type { Project, SecretTag } from '../db/schema.ts';
import { BadRequestError, NotFoundError } from '../errors.ts';
import type { Action } from '../permissions/permission-service.ts';
import { requireProject } from '../projects/project-lookup.ts';
import type { ServiceDeps } from '../services/deps.ts';
import { type TagSummary, toTagResponse, toTagSummary } from './tag-schema.ts';
import {
  deleteTag,
  deleteTagLinksOfSecret,
  findTagById,
  findTagBySlug,
  findTagsByIds,
  findTagsBySlugs,
  insertTag,
  insertTagLinks,
  listTagLinks,
  listTags,
  updateTag,
} from './tag-store.ts';

export { toTagSummary };

/** Renaming, recolouring or deleting a tag changes how listings of the project show it. */
function tagsChange(project: Project): Change {
  return { projectId: project.id, environmentId: null, environmentSlug: null, secretPath: null, kind: 'tags' };
}

function tagsNotFound(): NotFoundError {
  return new NotFoundError('One or more tags not found');
}

/** The project's tags with these ids, or 404 if any is unknown. */
export async function requireTagsByIds(db: Executor, projectId: string, tagIds: string[]): Promise<SecretTag[]> {
  const unique = [...new Set(tagIds)];
  const tags = await findTagsByIds(db, projectId, unique);
  if (tags.length !== unique.length) throw tagsNotFound();
  return tags;
}

/** The project's tags with these slugs, or 404 if any is unknown. */
export async function requireTagsBySlugs(db: Executor, projectId: string, slugs: string[]): Promise<SecretTag[]> {
  const unique = [...new Set(slugs)];
  const tags = await findTagsBySlugs(db, projectId, unique);
  if (tags.length !== unique.length) throw tagsNotFound();
  return tags;
}

/** Each secret's tags in slug order; every requested secret id is a key. */
export async function tagsOfSecrets(db: Executor, secretIds: string[]): Promise<Map<string, TagSummary[]>> {
  const bySecret = new Map<string, TagSummary[]>(secretIds.map((id) => [id, []]));
  for (const link of await listTagLinks(db, secretIds)) bySecret.get(link.secretId)?.push(toTagSummary(link));
  return bySecret;
}

/** Replaces the secret's tags; callers check the tags belong to the secret's project. */
export async function setSecretTags(db: Executor, secretId: string, tagIds: string[]): Promise<void> {
  await deleteTagLinksOfSecret(db, secretId);
  await insertTagLinks(db, secretId, [...new Set(tagIds)]);
}

function duplicateSlug(slug: string): BadRequestError {
  return new BadRequestError(`Tag with slug '${slug}' already exists`, 'DuplicateTagSlug');
}

export class TagService {
  readonly #deps: ServiceDeps;

  constructor(deps: ServiceDeps) {
    this.#deps = deps;
  }

  async create(actor: Actor, projectId: string, input: { slug: string; color: string }) {
    const { audit } = this.#deps;
    const tag = await this.#writeWithSlug(input.slug, async (trx) => {
      const project = await this.#authorize(trx, actor, projectId, 'create');
      const created = await insertTag(trx, {
        projectId: project.id,
        slug: input.slug,
        color: input.color,
        createdBy: actor.id,
        createdByActorType: actor.kind,
      });
      await audit.record(trx, actor, this.#scope(project), {
        type: 'create-tag',
        metadata: { tagId: created.id, slug: created.slug, color: created.color },
      });
      return created;
    });
    return toTagResponse(tag);
  }

  async list(actor: Actor, projectId: string) {
    const { db } = this.#deps;
    const project = await this.#authorize(db, actor, projectId, 'read');
    return (await listTags(db, project.id)).map(toTagResponse);
  }

  async getById(actor: Actor, projectId: string, tagId: string) {
    const { db } = this.#deps;
    const project = await this.#authorize(db, actor, projectId, 'read');
    return toTagResponse(await this.#requireInProject(db, project, tagId));
  }

  async getBySlug(actor: Actor, projectId: string, slug: string) {
    const { db } = this.#deps;
    const project = await this.#authorize(db, actor, projectId, 'read');
    const tag = await findTagBySlug(db, project.id, slug);
    if (!tag) throw new NotFoundError(`Tag with slug '${slug}' not found`);
    return toTagResponse(tag);
  }

  async update(actor: Actor, projectId: string, tagId: string, input: { slug?: string; color?: string }) {
    const { audit, changes } = this.#deps;
    const tag = await this.#writeWithSlug(input.slug, async (trx) => {
      const project = await this.#authorize(trx, actor, projectId, 'edit');
      const current = await this.#requireInProject(trx, project, tagId);
      if (input.slug === undefined && input.color === undefined) return current;
      const updated = await updateTag(trx, current.id, { slug: input.slug, color: input.color });
      await audit.record(trx, actor, this.#scope(project), {
        type: 'update-tag',
        metadata: { tagId: current.id, oldSlug: current.slug, newSlug: updated.slug, oldColor: current.color, newColor: updated.color },
      });
      await changes.record(trx, [tagsChange(project)]);
      return updated;
    });
    changes.committed();
    return toTagResponse(tag);
  }

  async delete(actor: Actor, projectId: string, tagId: string) {
    const { db, audit, changes } = this.#deps;
    const tag = await db.transaction().execute(async (trx) => {
      const project = await this.#authorize(trx, actor, projectId, 'delete');
      const current = await this.#requireInProject(trx, project, tagId);
      await deleteTag(trx, current.id);
      await audit.record(trx, actor, this.#scope(project), { type: 'delete-tag', metadata: { tagId: current.id, slug: current.slug } });
      await changes.record(trx, [tagsChange(project)]);
      return current;
    });
    changes.committed();
    return toTagResponse(tag);
  }

  /** Runs a write in a transaction, turning a clash on the project's slug constraint into a 400. */
  async #writeWithSlug(slug: string | undefined, work: (trx: Executor) => Promise<SecretTag>): Promise<SecretTag> {
    try {
      return await this.#deps.db.transaction().execute(work);
    } catch (error) {
      if (slug !== undefined && isUniqueViolation(error, 'secret_tags_slug_key')) throw duplicateSlug(slug);
      throw error;
    }
  }

  async #authorize(db: Executor, actor: Actor, projectId: string, action: Action): Promise<Project> {
    const project = await requireProject(db, projectId);
    await this.#deps.permissions.assertProjectPermission(actor, project, action, 'tags', undefined, db);
    return project;
  }

  async #requireInProject(db: Executor, project: Project, tagId: string): Promise<SecretTag> {
    const tag = await findTagById(db, tagId);
    if (!tag || tag.projectId !== project.id) throw new NotFoundError(`Tag with ID '${tagId}' not found`);
    return tag;
  }

  #scope(project: Project) {
    return { orgId: project.orgId, projectId: project.id, projectName: project.name };
  }
}
