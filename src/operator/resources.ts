import type { KubernetesObject, V1ObjectMeta } from '@kubernetes/client-node';

export const GROUP = 'coffer.dev';
export const VERSION = 'v1alpha1';
export const API_VERSION = `${GROUP}/${VERSION}`;
export const FINALIZER = 'coffer.dev/finalizer';
export const FIELD_MANAGER = 'coffer';
export const MANAGED_BY_LABEL = 'app.kubernetes.io/managed-by';
export const ANNOTATION_INTEGRATION = 'coffer.dev/integration';
export const ANNOTATION_REVISION = 'coffer.dev/revision';
export const ANNOTATION_DATA_HASH = 'coffer.dev/data-hash';
/** The Coffer installation (database) that manages an object: on managed Secrets and the Lease. */
export const ANNOTATION_INSTALLATION = 'coffer.dev/installation';
/** On a SecretsProject, SecretImport or Integration: a new value asks for an immediate reconcile (an Integration reads its source afresh). */
export const ANNOTATION_FORCE_SYNC = 'coffer.dev/force-sync';

export interface Condition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  reason: string;
  message: string;
  lastTransitionTime: string;
  observedGeneration?: number;
}

export interface ProjectReference {
  projectRef?: { name: string };
  projectSlug?: string;
}

interface Resource<Spec, Status> extends KubernetesObject {
  metadata: V1ObjectMeta & { name: string; namespace: string };
  spec: Spec;
  status?: Status;
}

export type SecretsProject = Resource<
  {
    name: string;
    slug?: string;
    autoCapitalization?: boolean;
    environments?: { name: string; slug: string; position?: number }[];
    allowedNamespaces?: string[];
    deletionPolicy?: 'Retain' | 'Delete';
    /** The project deleted through the API: Fail (Ready=False ProjectDeleted) or Recreate it empty. */
    onProjectDeleted?: 'Fail' | 'Recreate';
  },
  {
    projectId?: string;
    slug?: string;
    environments?: { slug: string; id: string }[];
    installationId?: string;
    conditions?: Condition[];
    observedGeneration?: number;
  }
>;

export type SecretImportResource = Resource<
  ProjectReference & {
    environment: string;
    path?: string;
    import: { environment: string; path: string };
    position?: number;
  },
  { secretImportId?: string; projectId?: string; installationId?: string; conditions?: Condition[]; observedGeneration?: number }
>;

export type CreationPolicy = 'Owner' | 'Orphan' | 'Merge';

export type IntegrationResource = Resource<
  ProjectReference & {
    environment: string;
    secretPath?: string;
    recursive?: boolean;
    includeImports?: boolean;
    isActive?: boolean;
    target: {
      name: string;
      type?: string;
      creationPolicy?: CreationPolicy;
      /** The whole source deleted in Coffer (project, environment or folder): Retain the last data, or Delete the Secret (Merge: its keys). */
      deletionPolicy?: 'Retain' | 'Delete';
      labels?: Record<string, string>;
      annotations?: Record<string, string>;
    };
  },
  {
    integrationId?: string;
    projectId?: string;
    projectSlug?: string;
    syncedRevision?: number;
    lastSyncTime?: string;
    secretCount?: number;
    dataHash?: string;
    /** Source keys left out because they cannot be Secret keys (names only). */
    skippedKeys?: string[];
    /** The last coffer.dev/force-sync value acted on. */
    forceSync?: string;
    installationId?: string;
    conditions?: Condition[];
    observedGeneration?: number;
  }
>;

export const KINDS = {
  SecretsProject: { plural: 'secretsprojects', kind: 'SecretsProject' },
  SecretImport: { plural: 'secretimports', kind: 'SecretImport' },
  Integration: { plural: 'integrations', kind: 'Integration' },
} as const;

export type KindName = keyof typeof KINDS;

/** Sets a condition, keeping its transition time when the status does not change. */
export function setCondition(conditions: Condition[] | undefined, next: Omit<Condition, 'lastTransitionTime'>): Condition[] {
  const current = conditions?.find((condition) => condition.type === next.type);
  const lastTransitionTime = current && current.status === next.status ? current.lastTransitionTime : new Date().toISOString();
  return [...(conditions ?? []).filter((condition) => condition.type !== next.type), { ...next, lastTransitionTime }];
}
