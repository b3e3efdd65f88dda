import type { Actor } from '../actor/actor.ts';
import type { Change } from '../changes/change-feed.ts';
import type { Project, SecretTag } from '../db/schema.ts';
import { BadRequestError, NotFoundError } from '../errors.ts';
import type { Action } from '../permissions/permission-service.ts';
import type { ServiceDeps } from '../services/deps.ts';
import type { WriteContext } from '../services/unit-of-work.ts';
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
import type { Executor, ReadOnlyDb } from '../db/database.ts';

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
export async function requireTagsBySlugs(db: ReadOnlyDb, projectId: string, slugs: string[]): Promise<SecretTag[]> {
  const unique = [...new Set(slugs)];
  const tags = await findTagsBySlugs(db, projectId, unique);
  if (tags.length !== unique.length) throw tagsNotFound();
  return tags;
}

/** Each secret's tags in slug order; every requested secret id is a key. */
export async function tagsOfSecrets(db: ReadOnlyDb, secretIds: string[]): Promise<Map<string, TagSummary[]>> {
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
    return this.#write(actor, projectId, 'create', input.slug, async (tx, project) => {
      const created = await insertTag(tx.db, {
        projectId: project.id,
        slug: input.slug,
        color: input.color,
        createdBy: actor.id,
        createdByActorType: actor.kind,
      });
      tx.audit({ project, type: 'create-tag', metadata: { tagId: created.id, slug: created.slug, color: created.color } });
      return toTagResponse(created);
    });
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
    return this.#write(actor, projectId, 'edit', input.slug, async (tx, project) => {
      const current = await this.#requireInProject(tx.db, project, tagId);
      if (input.slug === undefined && input.color === undefined) return toTagResponse(current);
      const updated = await updateTag(tx.db, current.id, { slug: input.slug, color: input.color });
      tx.audit({
        project,
        type: 'update-tag',
        metadata: { tagId: current.id, oldSlug: current.slug, newSlug: updated.slug, oldColor: current.color, newColor: updated.color },
      });
      tx.change(tagsChange(project));
      return toTagResponse(updated);
    });
  }

  async delete(actor: Actor, projectId: string, tagId: string) {
    return this.#write(actor, projectId, 'delete', undefined, async (tx, project) => {
      const current = await this.#requireInProject(tx.db, project, tagId);
      await deleteTag(tx.db, current.id);
      tx.audit({ project, type: 'delete-tag', metadata: { tagId: current.id, slug: current.slug } });
      tx.change(tagsChange(project));
      return toTagResponse(current);
    });
  }

  /** A write on the project's tags; a clash on the project's slug constraint is a 400. */
  #write<T>(actor: Actor, projectId: string, action: Exclude<Action, 'read'>, slug: string | undefined, work: (tx: WriteContext, project: Project) => Promise<T>) {
    return this.#deps.unitOfWork.write(
      actor,
      async (tx) => {
        const project = await tx.project({ id: projectId });
        await tx.authorize({ project, action, subject: 'tags' });
        return work(tx, project);
      },
      { conflicts: slug === undefined ? {} : { secret_tags_slug_key: () => duplicateSlug(slug) } },
    );
  }

  async #authorize(db: ReadOnlyDb, actor: Actor, projectId: string, action: Action): Promise<Project> {
    const project = await this.#deps.lookups.requireProject(db, { id: projectId });
    await this.#deps.permissions.assertProject({ actor, project, action, subject: 'tags' });
    return project;
  }

  async #requireInProject(db: ReadOnlyDb, project: Project, tagId: string): Promise<SecretTag> {
    const tag = await findTagById(db, tagId);
    if (!tag || tag.projectId !== project.id) throw new NotFoundError(`Tag with ID '${tagId}' not found`);
    return tag;
  }
}
