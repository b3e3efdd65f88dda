import { AppError } from '../errors.ts';
import { normalizeSecretPath } from '../folders/secret-path.ts';
import type { OperatorContext } from './context.ts';
import { mayReconcile } from './installation-guard.ts';
import { resolveProject } from './project-resolution.ts';
import { ensureFinalizer, removeFinalizer, reportNotReady, writeStatus } from './resource-status.ts';
import type { SecretImportResource } from './resources.ts';
import { notFoundAsUndefined } from './secrets-project-reconciler.ts';

/** SecretImport → a secret import in the project (op 7), kept as the spec says (op 4), deleted with the resource. */
export async function reconcileSecretImport(context: OperatorContext, resource: SecretImportResource): Promise<number | void> {
  if (!(await mayReconcile(context, 'SecretImport', resource))) return;
  if (resource.metadata.deletionTimestamp) return finalize(context, resource);
  await ensureFinalizer(context, 'SecretImport', resource);
  try {
    const project = await resolveProject(context, resource.metadata.namespace, resource.spec);
    const secretImport = await converge(context, resource, project.projectId);
    await writeStatus(context, 'SecretImport', resource, { secretImportId: secretImport.id, projectId: project.projectId }, [
      { type: 'Ready', status: 'True', reason: 'Reconciled', message: `imports ${resource.spec.import.environment}:${secretImport.importPath}` },
    ]);
  } catch (error) {
    return reportNotReady(context, 'SecretImport', resource, error);
  }
}

function location(resource: SecretImportResource, projectId: string) {
  return { projectId, environment: resource.spec.environment, path: resource.spec.path ?? '/' };
}

/** Level-triggered: the import named in the status, else the one already importing this source (a lost status write), else a new one. */
async function converge(context: OperatorContext, resource: SecretImportResource, projectId: string) {
  const { services, actor } = context;
  const { spec } = resource;
  const where = location(resource, projectId);
  const wantedPath = normalizeSecretPath(spec.import.path);
  const existingId = resource.status?.projectId === projectId ? resource.status.secretImportId : undefined;
  const existing =
    (existingId ? await services.imports.get(actor, existingId).catch(notFoundAsUndefined) : undefined) ??
    (await services.imports.list(actor, where)).find((entry) => entry.importEnv.slug === spec.import.environment && entry.importPath === wantedPath);
  if (!existing) {
    const created = await services.imports.create(actor, { ...where, source: spec.import });
    if (spec.position === undefined || spec.position === created.position) return created;
    return services.imports.update(actor, created.id, { ...where, changes: { position: spec.position } });
  }
  const drifted =
    existing.importEnv.slug !== spec.import.environment ||
    existing.importPath !== wantedPath ||
    (spec.position !== undefined && spec.position !== existing.position);
  if (!drifted) return existing;
  return services.imports.update(actor, existing.id, {
    ...where,
    changes: { environment: spec.import.environment, path: wantedPath, position: spec.position },
  });
}

async function finalize(context: OperatorContext, resource: SecretImportResource): Promise<void> {
  const { secretImportId, projectId } = resource.status ?? {};
  if (secretImportId && projectId) {
    await context.services.imports.delete(context.actor, secretImportId, location(resource, projectId)).catch((error: unknown) => {
      if (!(error instanceof AppError && error.statusCode === 404)) throw error;
    });
  }
  await removeFinalizer(context, 'SecretImport', resource);
}
