import { AccessRefusedError } from '../grants/project-claims.ts';
import type { OperatorContext } from './context.ts';
import { NotReadyError } from './context.ts';
import type { ProjectReference, SecretsProject } from './resources.ts';

export interface ResolvedProject {
  projectId: string;
  slug: string;
  declaredBy: SecretsProject;
}

/**
 * Tenancy: a resource may use a project declared by a SecretsProject in its
 * own namespace or, through it, by one in another namespace: what the
 * database says decides (ProjectClaims.authorizeUse: the declaration's claim,
 * matched by uid, and the namespace grants), never a resource's status. A
 * project named by slug is found by the claim on it. Nothing is read for a
 * resource that fails this check.
 */
export async function resolveProject(context: OperatorContext, namespace: string, reference: ProjectReference): Promise<ResolvedProject> {
  const declaration = reference.projectRef ? context.projects.get(reference.projectRef.name, namespace) : await declarationOfSlug(context, reference.projectSlug!);
  if (!declaration) {
    if (reference.projectRef) {
      throw new NotReadyError('ProjectNotFound', `SecretsProject '${reference.projectRef.name}' does not exist in namespace '${namespace}'`, 30_000);
    }
    throw new NotReadyError('Forbidden', `project '${reference.projectSlug}' is not declared by any SecretsProject in this cluster`, 60_000);
  }
  if (declaration.metadata.deletionTimestamp) {
    throw new NotReadyError('ProjectNotReady', `SecretsProject '${declaration.metadata.namespace}/${declaration.metadata.name}' is being deleted`, 30_000);
  }
  try {
    const { projectId, slug } = await context.services.projectClaims.authorizeUse(
      {
        cluster: context.clusterName,
        namespace: declaration.metadata.namespace,
        name: declaration.metadata.name,
        uid: declaration.metadata.uid!,
        allowedNamespaces: declaration.spec.allowedNamespaces ?? [],
      },
      { cluster: context.clusterName, namespace },
    );
    return { projectId, slug, declaredBy: declaration };
  } catch (error) {
    throw asNotReady(error);
  }
}

/** The SecretsProject the database records as the claimant of the project with this slug, if the cluster still has it. */
async function declarationOfSlug(context: OperatorContext, slug: string): Promise<SecretsProject | undefined> {
  const claimant = await context.services.projectClaims.claimantOfSlug(context.actor.orgId, context.clusterName, slug);
  if (!claimant) return undefined;
  const resource = context.projects.get(claimant.name, claimant.namespace);
  return resource?.metadata.uid === claimant.uid ? resource : undefined;
}

/** A refusal of the claims service as the operator reports it: its code is the condition's reason. */
export function asNotReady(error: unknown): unknown {
  if (!(error instanceof AccessRefusedError)) return error;
  return new NotReadyError(error.error, error.message, error.error === 'ProjectNotReady' ? 5_000 : 60_000);
}

/** Integrations and imports that use a SecretsProject: re-reconciled when it changes. */
export function dependentsOf(context: OperatorContext, project: SecretsProject): { integrations: string[]; imports: string[] } {
  const { namespace, name } = project.metadata;
  const slug = project.status?.slug;
  const uses = (resource: { metadata: { namespace: string }; spec: ProjectReference }) =>
    (resource.metadata.namespace === namespace && resource.spec.projectRef?.name === name) || (slug !== undefined && resource.spec.projectSlug === slug);
  const key = (resource: { metadata: { namespace: string; name: string } }) => `${resource.metadata.namespace}/${resource.metadata.name}`;
  return {
    integrations: context.integrations.list().filter(uses).map(key),
    imports: context.imports.list().filter(uses).map(key),
  };
}
