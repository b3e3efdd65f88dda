import { z } from 'zod';
import type { Cluster } from '../db/schema.ts';

export const boundIdentitySchema = z.object({
  id: z.string().describe("The identity's id."),
  name: z.string().describe("The identity's name."),
  authMethod: z.string().nullable().describe('How it logs in (`kubernetes-auth`, `jwt-auth`, `universal-auth`).'),
});

export const clusterSchema = z.object({
  id: z.string(),
  name: z.string().describe('The name grants, claims and integration records use for this cluster, unique in the organization.'),
  description: z.string(),
  identities: z.array(boundIdentitySchema).describe('The identities that act for this cluster (its operator credentials).'),
  createdAt: z.string(),
});

export type ClusterResponse = z.infer<typeof clusterSchema>;
export type BoundIdentity = z.infer<typeof boundIdentitySchema>;

export function toClusterResponse(cluster: Cluster, identities: BoundIdentity[]): ClusterResponse {
  return { id: cluster.id, name: cluster.name, description: cluster.description, identities, createdAt: new Date(cluster.createdAt).toISOString() };
}
