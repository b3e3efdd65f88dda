import { z } from 'zod';
import type { NamespaceGrant } from '../db/schema.ts';

/** A Kubernetes namespace name (DNS-1123 label); cluster names follow the same rule. */
const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
export const namespaceNameSchema = z
  .string()
  .trim()
  .min(1)
  .max(63)
  .regex(DNS_LABEL, 'must be a Kubernetes namespace name: lowercase letters, digits and hyphens, starting and ending with a letter or digit');
export const clusterNameSchema = z
  .string()
  .trim()
  .min(1)
  .max(63)
  .regex(DNS_LABEL, 'must be lowercase letters, digits and hyphens, starting and ending with a letter or digit');

export const namespaceGrantSchema = z.object({
  id: z.string(),
  projectId: z.string(),
  cluster: z.string().describe("the cluster: a registered cluster's name (only credentials bound to it use the grant) or this server's own (COFFER_CLUSTER_NAME)"),
  namespace: z.string(),
  origin: z.enum(['api', 'created']).describe("'api': given through this API; 'created': the namespace's SecretsProject created the project"),
  grantedBy: z.object({ type: z.enum(['user', 'identity']), id: z.string(), name: z.string() }),
  createdAt: z.string(),
});

export type NamespaceGrantResponse = z.infer<typeof namespaceGrantSchema>;

export function toGrantResponse(grant: NamespaceGrant): NamespaceGrantResponse {
  return {
    id: grant.id,
    projectId: grant.projectId,
    cluster: grant.cluster,
    namespace: grant.namespace,
    origin: grant.origin,
    grantedBy: { type: grant.grantedByType, id: grant.grantedById, name: grant.grantedByName },
    createdAt: new Date(grant.createdAt).toISOString(),
  };
}

/** The API call that gives a grant, as a refusal names it. */
export function grantCall(projectSlug: string, cluster: string, namespace: string): string {
  return `POST /api/v1/workspace/${projectSlug}/namespace-grants {"cluster":"${cluster}","namespace":"${namespace}"}`;
}
