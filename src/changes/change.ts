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
] as const;
export type ChangeKind = (typeof CHANGE_KINDS)[number];

/**
 * Kinds that never alter the keys and values a path resolves to (integration
 * records; tags on secrets; namespace grants), only what an API listing shows
 * or who may read it.
 */
export const LISTING_METADATA_KINDS: ReadonlySet<ChangeKind> = new Set(['integration', 'tags', 'access']);

export interface Change {
  projectId: string;
  environmentId: string | null;
  environmentSlug: string | null;
  secretPath: string | null;
  kind: ChangeKind;
}

export interface ChangeRecord extends Change {
  revision: number;
  createdAt: Date;
}
