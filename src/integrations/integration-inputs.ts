import type { ReadPlace } from '../changes/read-places.ts';
import type { IntegrationMetadata } from './integration-schema.ts';
import type { IntegrationValues } from './integration-store.ts';
import type { TargetKeys } from './target-keys.ts';

export type Target = Partial<
  Pick<
    IntegrationValues,
    'url' | 'app' | 'appId' | 'targetEnvironment' | 'targetEnvironmentId' | 'targetService' | 'targetServiceId' | 'owner' | 'path' | 'region' | 'scope'
  >
>;

export interface CreateIntegrationInput extends Target {
  integrationAuthId: string;
  sourceEnvironment: string;
  secretPath: string;
  isActive: boolean;
  metadata: IntegrationMetadata;
}

export interface UpdateIntegrationInput {
  isActive: boolean;
  app?: string;
  appId?: string;
  targetEnvironment?: string;
  owner?: string;
  /** Source environment slug; the current one when absent. */
  environment?: string;
  /** Kept when absent (the reference resets it to "/"). */
  secretPath?: string;
  /** Shallow-merged into the stored metadata. */
  metadata?: IntegrationMetadata;
}

export interface ManagedIntegrationInput {
  /** `<namespace>/<name>` of the Integration resource. */
  managedBy: string;
  /** The resource's cluster (default: the in-process operator's, COFFER_CLUSTER_NAME). */
  cluster?: string;
  projectId: string;
  environment: string;
  secretPath: string;
  app: string;
  owner: string;
  targetEnvironment: string;
  /** Left as stored when undefined (true on creation). */
  isActive?: boolean;
  /** Where the resource lives: installation, cluster, namespace, name (the record's `metadata`; `{}` when absent). */
  metadata?: Record<string, string>;
  /** The Integration rolls workloads (spec.reload): the revision barrier waits for its reload too. Left as stored when undefined. */
  reloads?: boolean;
}

export interface SyncResult {
  isSynced: boolean;
  /** Status text only: never a secret value. */
  syncMessage: string | null;
  /** The revision the target reflects; left as stored when undefined (a failed sync changed nothing). */
  syncedRevision?: number | null;
  /** What the sync read; left as stored when undefined. */
  places?: ReadPlace[];
  /** Where its target's keys came from and which workloads read them (names only); left as stored when undefined, forgotten when null. */
  targetKeys?: TargetKeys | null;
}
