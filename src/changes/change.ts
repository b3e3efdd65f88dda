/**
 * What the change feed records: a change to what a place resolves to, or to how listings show it
 * (`access`: a namespace grant given or revoked, so who may use the project in a cluster changed).
 */
export const CHANGE_KINDS = [
  'secret',
  'folder',
  'import',
  'environment-created',
  'environment-updated',
  'environment-deleted',
  'project-deleted',
  'integration',
  'tags',
  'access',
  'rotation',
] as const;
export type ChangeKind = (typeof CHANGE_KINDS)[number];

/**
 * Kinds that never alter the keys and values a path resolves to (integration
 * records; tags on secrets; namespace grants), only what an API listing shows
 * or who may read it.
 */
export const LISTING_METADATA_KINDS: ReadonlySet<ChangeKind> = new Set(['integration', 'tags', 'access', 'rotation']);

/** The phases of a secret rotation the Integrations reading its place are told of. */
export const ROTATION_PHASES = ['rotated', 'waiting', 'stopped', 'retired'] as const;
export type RotationPhase = (typeof ROTATION_PHASES)[number];

/** What a `rotation` change says: the rotation (its name) and the phase it reached; never a value. */
export interface RotationNote {
  rotation: string;
  phase: RotationPhase;
}

export interface Change {
  projectId: string;
  environmentId: string | null;
  environmentSlug: string | null;
  secretPath: string | null;
  kind: ChangeKind;
  /** Kind `rotation` only. */
  rotation?: RotationNote | null;
}

export interface ChangeRecord extends Change {
  revision: number;
  createdAt: Date;
}
