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

/** What an Integration writes. */
export type TargetKind = 'Secret' | 'ConfigMap';

/** Which keys of a source go on, and under which names (names only; values never matter here). */
export interface KeySelection {
  /** Glob patterns (patterns/name-glob.ts, case-sensitive): a key must match one of them. All keys when unset. */
  include?: string[];
  /** Glob patterns: a key matching one of them is left out (after include). */
  exclude?: string[];
  /** Tag slugs: a secret must carry at least one of them. */
  tags?: string[];
  /** Tag slugs: a secret carrying any of them is left out. */
  excludeTags?: string[];
  /** How the selected keys are renamed, in this order: strip the prefix, rewrite, add the prefix. */
  rename?: {
    stripPrefix?: string;
    /** RE2 regular expressions (linear time), applied in order; every match is replaced; `$1`, `${name}` in the replacement. */
    rewrite?: { regex: string; replacement: string }[];
    addPrefix?: string;
  };
}

/** One place an Integration reads: a folder of an environment of its project, maybe with what lies below it and what it imports. */
export interface IntegrationSource {
  environment: string;
  secretPath?: string;
  recursive?: boolean;
  includeImports?: boolean;
  keys?: KeySelection;
}

/** What the target holds besides (or instead of) the selected secrets, rendered from templates over them. */
export interface TargetTemplate {
  /** The Secret's type (kubernetes.io/tls, kubernetes.io/dockerconfigjson, …); target.type when unset. */
  type?: string;
  metadata?: { labels?: Record<string, string>; annotations?: Record<string, string> };
  /** Data key → Liquid template over the selected secrets. */
  data?: Record<string, string>;
  /** Replace: the target holds only the rendered keys. Merge: the selected secrets too (a rendered key wins). */
  mergePolicy?: 'Replace' | 'Merge';
}

export type WorkloadKind = 'Deployment' | 'StatefulSet' | 'DaemonSet';

export interface ReloadSpec {
  /** Workloads in this namespace to roll when a key they consume changes. */
  workloads?: { kind: WorkloadKind; name: string }[];
  /** Changes within this window roll a workload once (a duration: "5s", "1m"; "0s" rolls at once). */
  debounce?: string;
}

export type IntegrationResource = Resource<
  ProjectReference & {
    environment: string;
    secretPath?: string;
    recursive?: boolean;
    includeImports?: boolean;
    /** Selection and renames for the primary source (environment, secretPath). */
    keys?: KeySelection;
    /** Further sources of the same project, merged after the primary one; a later source's key wins. */
    sources?: IntegrationSource[];
    isActive?: boolean;
    target: {
      /** What is written: a Secret (default) or a ConfigMap. Immutable. */
      kind?: TargetKind;
      name: string;
      type?: string;
      creationPolicy?: CreationPolicy;
      /** The whole source deleted in Coffer (project, environment or folder): Retain the last data, or Delete the Secret (Merge: its keys). */
      deletionPolicy?: 'Retain' | 'Delete';
      labels?: Record<string, string>;
      annotations?: Record<string, string>;
      template?: TargetTemplate;
    };
    reload?: ReloadSpec;
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
    /** Keys that more than one source (or rename) gave a value for: who won, who lost (names and places only). */
    collisions?: KeyCollision[];
    /** The last coffer.dev/force-sync value acted on. */
    forceSync?: string;
    /** The newest revision whose changes the reload has dealt with (workloads rolled or found current). */
    reloadedRevision?: number;
    /** The last rollout: when, at which revision, which workloads and which of their keys changed. */
    lastRollout?: { time: string; revision: number; workloads: string[]; keys: string[] };
    installationId?: string;
    conditions?: Condition[];
    observedGeneration?: number;
  }
>;

/** A key given by more than one place: the place whose value the target holds, and the places overridden. */
export interface KeyCollision {
  key: string;
  winner: string;
  overridden: string[];
}

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
