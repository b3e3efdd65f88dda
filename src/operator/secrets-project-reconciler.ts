import slugify from '@sindresorhus/slugify';
import { createHash } from 'node:crypto';
import { NotFoundError } from '../errors.ts';
import type { OperatorContext } from './context.ts';
import { mayReconcile } from './installation-guard.ts';
import { asNotReady } from './project-resolution.ts';
import { ensureFinalizer, removeFinalizer, reportNotReady, writeStatus } from './resource-status.ts';
import type { SecretsProject } from './resources.ts';

/** The slug of a SecretsProject without spec.slug: from its namespace and name, 5 to 36 characters. */
export function defaultProjectSlug(namespace: string, name: string): string {
  const base = slugify(`${namespace}-${name}`);
  if (base.length > 36) return `${base.slice(0, 29).replace(/-+$/, '')}-${createHash('sha256').update(base).digest('hex').slice(0, 6)}`;
  return base.length >= 5 ? base : `${base}-project`;
}

/**
 * SecretsProject → a project, created or (with a namespace grant) claimed,
 * with its name, autoCapitalization and listed environments. Without a grant
 * for an existing project nothing about it is read, renamed or deleted.
 */
export async function reconcileSecretsProject(context: OperatorContext, resource: SecretsProject): Promise<number | void> {
  if (!(await mayReconcile(context, 'SecretsProject', resource))) return;
  if (resource.metadata.deletionTimestamp) return finalize(context, resource);
  await ensureFinalizer(context, 'SecretsProject', resource);
  try {
    const project = await declareProject(context, resource);
    await convergeSettings(context, resource, project);
    const environments = await convergeEnvironments(context, resource, project.id);
    await writeStatus(context, 'SecretsProject', resource, { projectId: project.id, slug: project.slug, environments }, [
      { type: 'Ready', status: 'True', reason: 'Reconciled', message: `project '${project.slug}' is in sync` },
    ]);
  } catch (error) {
    return reportNotReady(context, 'SecretsProject', resource, error);
  }
}

/** The project this SecretsProject declares (ProjectClaims.declare: created, or claimed with a grant). */
async function declareProject(context: OperatorContext, resource: SecretsProject) {
  const { services, actor } = context;
  const slug = resource.spec.slug ?? defaultProjectSlug(resource.metadata.namespace, resource.metadata.name);
  try {
    const { projectId } = await services.projectClaims.declare(actor, claimantOf(context, resource), { slug, name: resource.spec.name });
    return await services.projects.get(actor, projectId);
  } catch (error) {
    throw asNotReady(error);
  }
}

function claimantOf(context: OperatorContext, resource: SecretsProject) {
  const { namespace, name, uid } = resource.metadata;
  return { cluster: context.clusterName, namespace, name, uid: uid! };
}

async function convergeSettings(context: OperatorContext, resource: SecretsProject, project: { id: string; name: string; autoCapitalization: boolean }) {
  const changes: { name?: string; autoCapitalization?: boolean } = {};
  if (project.name !== resource.spec.name) changes.name = resource.spec.name;
  const wanted = resource.spec.autoCapitalization;
  if (wanted !== undefined && wanted !== project.autoCapitalization) changes.autoCapitalization = wanted;
  if (Object.keys(changes).length > 0) await context.services.projects.update(context.actor, project.id, changes);
}

async function convergeEnvironments(context: OperatorContext, resource: SecretsProject, projectId: string) {
  const { services, actor } = context;
  for (const wanted of resource.spec.environments ?? []) {
    const project = await services.projects.get(actor, projectId);
    const current = project.environments.find((environment) => environment.slug === wanted.slug);
    if (!current) {
      await services.environments.create(actor, projectId, wanted);
      continue;
    }
    const detail = await services.environments.get(actor, current.id, projectId);
    const positionDiffers = wanted.position !== undefined && wanted.position !== detail.position;
    if (detail.name !== wanted.name || positionDiffers) {
      await services.environments.update(actor, projectId, current.id, { name: wanted.name, position: positionDiffers ? wanted.position : undefined });
    }
  }
  const project = await services.projects.get(actor, projectId);
  return project.environments.map(({ slug, id }) => ({ slug, id }));
}

/** The claim ends; with deletionPolicy Delete the project goes too, only if this resource created it. */
async function finalize(context: OperatorContext, resource: SecretsProject): Promise<void> {
  await context.services.projectClaims.release(context.actor, claimantOf(context, resource), resource.spec.deletionPolicy === 'Delete').catch(notFoundAsUndefined);
  await removeFinalizer(context, 'SecretsProject', resource);
}

export function notFoundAsUndefined(error: unknown): undefined {
  if (error instanceof NotFoundError) return undefined;
  throw error;
}
