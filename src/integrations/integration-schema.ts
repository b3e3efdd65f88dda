import { z } from 'zod';
import type { IntegrationAuth } from '../db/schema.ts';
import { exactText, openObject } from '../validation/input.ts';
import type { IntegrationRow } from './integration-store.ts';

/** The operator's own integration type: a native Kubernetes Secret kept in sync. */
export const KUBERNETES_INTEGRATION = 'kubernetes';

/** The reference's integration slugs, plus Coffer's "kubernetes". */
export const INTEGRATION_SLUGS: ReadonlySet<string> = new Set([
  'azure-key-vault',
  'aws-parameter-store',
  'aws-secret-manager',
  'gcp-secret-manager',
  'heroku',
  'vercel',
  'netlify',
  'github',
  'gitlab',
  'render',
  'railway',
  'flyio',
  'laravel-forge',
  'circleci',
  'databricks',
  'travisci',
  'teamcity',
  'supabase',
  'checkly',
  'qovery',
  'terraform-cloud',
  'hashicorp-vault',
  'cloudflare-pages',
  'cloudflare-workers',
  'bitbucket',
  'codefresh',
  'windmill',
  'digital-ocean-app-platform',
  'cloud-66',
  'northflank',
  'hasura-cloud',
  'rundeck',
  'azure-devops',
  KUBERNETES_INTEGRATION,
]);

const option = () => exactText();

/**
 * Integration options, as the reference names them; unknown keys (JSON of a
 * few levels) are kept so a client's own settings survive a round trip.
 */
export const integrationMetadataSchema = openObject({
  initialSyncBehavior: option().optional().describe("What the first sync does with what the target already holds (the provider's option)."),
  secretPrefix: option().optional().describe('A prefix for the synced keys.'),
  secretSuffix: option().optional().describe('A suffix for the synced keys.'),
  mappingBehavior: z.enum(['one-to-one', 'many-to-one']).optional().describe('One target secret per key, or all keys in one.'),
  shouldAutoRedeploy: z.boolean().optional().describe('Whether the provider redeploys after a sync.'),
  secretGCPLabel: z
    .object({ labelName: option().describe("The label's name."), labelValue: option().describe("The label's value.") })
    .optional()
    .describe('For GCP: a label put on the synced secrets.'),
  secretAWSTag: z
    .array(z.object({ key: option().describe("The tag's key."), value: option().describe("The tag's value.") }))
    .optional()
    .describe('For AWS: tags put on the synced secrets.'),
  githubVisibility: z.enum(['selected', 'private', 'all']).optional().describe('For GitHub organization secrets: which repositories see them.'),
  githubVisibilityRepoIds: z.array(option()).optional().describe('For GitHub: the repositories when the visibility is `selected`.'),
  kmsKeyId: option().optional().describe('For AWS: the KMS key to encrypt the synced secrets with.'),
  shouldDisableDelete: z.boolean().optional().describe('Whether keys removed here are kept at the provider.'),
  shouldEnableDelete: z.boolean().optional().describe('Whether keys removed here are deleted at the provider.'),
  shouldMaskSecrets: z.boolean().optional().describe('For GitLab: whether the variables are masked.'),
  shouldProtectSecrets: z.boolean().optional().describe('For GitLab: whether the variables are protected.'),
});

export type IntegrationMetadata = z.infer<typeof integrationMetadataSchema>;

export const integrationAuthSchema = z.object({
  id: z.string(),
  projectId: z.string(),
  integration: z.string(),
  teamId: z.string().nullable(),
  url: z.string().nullable(),
  namespace: z.string().nullable(),
  accountId: z.string().nullable(),
  metadata: z.unknown(),
  createdAt: z.string(),
  updatedAt: z.string(),
});

export type IntegrationAuthResponse = z.infer<typeof integrationAuthSchema>;

/** Never the sealed credentials: only the fields listed here leave the service. */
export function toIntegrationAuthResponse(row: IntegrationAuth): IntegrationAuthResponse {
  return {
    id: row.id,
    projectId: row.projectId,
    integration: row.integration,
    teamId: row.teamId,
    url: row.url,
    namespace: row.namespace,
    accountId: row.accountId,
    metadata: row.metadata ?? null,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}

/** Where a synced Secret lives: what a project admin reads to know where the project's secrets are. */
export const kubernetesPlacementSchema = z.object({
  cluster: z.string().describe('The cluster, as its operator names itself (`COFFER_CLUSTER_NAME`).'),
  namespace: z.string().describe('The namespace of the Integration resource and its Secret.'),
  name: z.string().describe("The Integration resource's name."),
  secretName: z.string().nullable().describe('The Secret the operator writes.'),
  syncedRevision: z.number().nullable().describe('The change-log revision the Secret last reflected; null before the first sync.'),
});

export const integrationSchema = z.object({
  id: z.string(),
  isActive: z.boolean(),
  url: z.string().nullable(),
  app: z.string().nullable(),
  appId: z.string().nullable(),
  targetEnvironment: z.string().nullable(),
  targetEnvironmentId: z.string().nullable(),
  targetService: z.string().nullable(),
  targetServiceId: z.string().nullable(),
  owner: z.string().nullable(),
  path: z.string().nullable(),
  region: z.string().nullable(),
  scope: z.string().nullable(),
  integration: z.string(),
  metadata: z.unknown(),
  integrationAuthId: z.string(),
  envId: z.string(),
  secretPath: z.string(),
  createdAt: z.string(),
  updatedAt: z.string(),
  lastUsed: z.string().nullable(),
  isSynced: z.boolean().nullable(),
  syncMessage: z.string().nullable(),
  environment: z.object({ slug: z.string(), name: z.string(), id: z.string() }),
  kubernetes: kubernetesPlacementSchema
    .nullable()
    .describe("Where an operator keeps this integration's Secret: its cluster, namespace and names; null for a record no Integration resource keeps."),
});

export type IntegrationResponse = z.infer<typeof integrationSchema>;

export function toIntegrationResponse(row: IntegrationRow): IntegrationResponse {
  return {
    id: row.id,
    isActive: row.isActive,
    url: row.url,
    app: row.app,
    appId: row.appId,
    targetEnvironment: row.targetEnvironment,
    targetEnvironmentId: row.targetEnvironmentId,
    targetService: row.targetService,
    targetServiceId: row.targetServiceId,
    owner: row.owner,
    path: row.path,
    region: row.region,
    scope: row.scope,
    integration: row.integration,
    metadata: row.metadata ?? {},
    integrationAuthId: row.integrationAuthId,
    envId: row.envId,
    secretPath: row.secretPath,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
    lastUsed: row.lastUsed?.toISOString() ?? null,
    isSynced: row.isSynced,
    syncMessage: row.syncMessage,
    environment: { slug: row.envSlug, name: row.envName, id: row.envId },
    kubernetes: toKubernetesPlacement(row),
  };
}

function toKubernetesPlacement(row: IntegrationRow): z.infer<typeof kubernetesPlacementSchema> | null {
  if (row.managedBy === null || row.cluster === null) return null;
  const [namespace = '', name = ''] = row.managedBy.split('/');
  return { cluster: row.cluster, namespace, name, secretName: row.app, syncedRevision: row.syncedRevision };
}

/** Most names one page of the operator's listing of its records answers (GET /api/v1/operator/integrations). */
export const MANAGED_PAGE_MAX = 5_000;
