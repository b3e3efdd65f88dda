import type { ProjectReference, SecretsProject } from '../resources.ts';
import { formatNamespacedName } from '../runtime/object-key.ts';
import { type ControllerContext, NotReadyError } from './context.ts';
import { asNotReady } from './failures.ts';

export interface ResolvedProject {
  projectId: string;
  slug: string;
  declaredBy: SecretsProject;
}

/**
 * Tenancy: a resource may use a project declared by a SecretsProject in its
 * own namespace or, through it, by one in another namespace: what the
 * database says decides (project claims: the declaration's claim, matched by
 * uid, and the namespace grants), never a resource's status. A project named
 * by slug is found by the claim on it. Nothing is read for a resource that
 * fails this check.
 */
export async function resolveProject(context: ControllerContext, namespace: string, reference: ProjectReference): Promise<ResolvedProject> {
  const declaration = reference.projectRef
    ? context.informers.projects.get(reference.projectRef.name, namespace)
    : await declarationOfSlug(context, reference.projectSlug!);
  if (!declaration) {
    if (reference.projectRef) {
      throw new NotReadyError('ProjectNotFound', `SecretsProject '${reference.projectRef.name}' does not exist in namespace '${namespace}'`, { afterMs: 30_000 });
    }
    throw new NotReadyError('ProjectNotDeclared', `project '${reference.projectSlug}' is not declared by any SecretsProject in this cluster`, { afterMs: 60_000 });
  }
  if (declaration.metadata.deletionTimestamp) {
    throw new NotReadyError('ProjectNotReady', `SecretsProject '${formatNamespacedName(declaration.metadata)}' is being deleted`, { afterMs: 30_000 });
  }
  const ready = declaration.status?.conditions?.find((condition) => condition.type === 'Ready');
  if (ready?.status === 'False' && ready.reason === 'ProjectDeleted') {
    // its SecretsProject changing (recreated, or deleted) wakes this resource again
    throw new NotReadyError(
      'ProjectDeleted',
      `project '${declaration.status?.slug ?? declaration.spec.slug}' of SecretsProject '${formatNamespacedName(declaration.metadata)}' was deleted in Coffer`,
    );
  }
  const { clusterName: cluster } = context.identity;
  try {
    const { projectId, slug } = await context.port.projects.authorizeUse(
      {
        cluster,
        namespace: declaration.metadata.namespace,
        name: declaration.metadata.name,
        uid: declaration.metadata.uid!,
        allowedNamespaces: declaration.spec.allowedNamespaces ?? [],
      },
      { cluster, namespace },
    );
    return { projectId, slug, declaredBy: declaration };
  } catch (error) {
    throw asNotReady(error);
  }
}

/** The SecretsProject the database records as the claimant of the project with this slug, if the cluster still has it. */
async function declarationOfSlug(context: ControllerContext, slug: string): Promise<SecretsProject | undefined> {
  const claimant = await context.port.projects.claimantOfSlug(context.identity.clusterName, slug);
  if (!claimant) return undefined;
  const resource = context.informers.projects.get(claimant.name, claimant.namespace);
  return resource?.metadata.uid === claimant.uid ? resource : undefined;
}

/** Whether `resource` uses the SecretsProject `project` (by reference in its namespace, or by the slug its status shows). */
export function usesProject(project: SecretsProject, resource: { metadata: { namespace: string }; spec: ProjectReference }): boolean {
  const { namespace, name } = project.metadata;
  const slug = project.status?.slug;
  return (resource.metadata.namespace === namespace && resource.spec.projectRef?.name === name) || (slug !== undefined && resource.spec.projectSlug === slug);
}
