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
 * own namespace, or one whose allowedNamespaces names its namespace. Nothing
 * is read for a resource that fails this check.
 */
export function resolveProject(context: OperatorContext, namespace: string, reference: ProjectReference): ResolvedProject {
  const declaration = reference.projectRef
    ? context.projects.get(reference.projectRef.name, namespace)
    : findDeclaration(context, namespace, reference.projectSlug!);
  if (!declaration) {
    if (reference.projectRef) {
      throw new NotReadyError('ProjectNotFound', `SecretsProject '${reference.projectRef.name}' does not exist in namespace '${namespace}'`, 30_000);
    }
    throw new NotReadyError(
      'Forbidden',
      `project '${reference.projectSlug}' is not declared by a SecretsProject in namespace '${namespace}' nor allows that namespace`,
    );
  }
  const { projectId, slug } = declaration.status ?? {};
  if (!projectId || !slug) {
    throw new NotReadyError('ProjectNotReady', `SecretsProject '${declaration.metadata.namespace}/${declaration.metadata.name}' is not ready yet`, 5_000);
  }
  return { projectId, slug, declaredBy: declaration };
}

function findDeclaration(context: OperatorContext, namespace: string, slug: string): SecretsProject | undefined {
  const declarations = context.projects.list().filter((project) => project.status?.slug === slug && !project.metadata.deletionTimestamp);
  return (
    declarations.find((project) => project.metadata.namespace === namespace) ??
    declarations.find((project) => project.spec.allowedNamespaces?.includes(namespace))
  );
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
