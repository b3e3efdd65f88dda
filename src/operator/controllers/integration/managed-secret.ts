import { createHash } from 'node:crypto';
import type { V1OwnerReference, V1Secret } from '@kubernetes/client-node';
import type { Revision, SecretListing } from '../../port/coffer-port.ts';
import {
  ANNOTATION_DATA_HASH,
  ANNOTATION_INSTALLATION,
  ANNOTATION_INTEGRATION,
  ANNOTATION_REVISION,
  API_VERSION,
  type CreationPolicy,
  FIELD_MANAGER,
  type IntegrationResource,
  MANAGED_BY_LABEL,
} from '../../resources.ts';
import { formatNamespacedName } from '../../runtime/object-key.ts';

/** Characters of a Secret data key (the apiserver's ConfigMap key rule). */
const SECRET_KEY_CHARACTERS = /^[-._a-zA-Z0-9]+$/;
const SECRET_KEY_MAX_LENGTH = 253;

/** The apiserver refuses a Secret whose values add up to more than this many bytes. */
export const MAX_SECRET_DATA_BYTES = 1024 * 1024;

/** Whether the apiserver accepts `key` as a Secret data key: ≤ 253 of [-._a-zA-Z0-9], not '.', not starting with '..'. */
export function isSecretKey(key: string): boolean {
  return key.length <= SECRET_KEY_MAX_LENGTH && SECRET_KEY_CHARACTERS.test(key) && key !== '.' && !key.startsWith('..');
}

export interface ResolvedData {
  data: Record<string, string>;
  /** Keys that cannot be Secret data keys, left out (sorted). */
  skipped: string[];
}

/**
 * The plain key/value pairs an Integration's Secret holds. Imports apply in
 * position order (the last wins), then the path's own secrets win over them;
 * with recursion, secrets nearer the synced path win over deeper ones.
 */
export function resolveSecretData({ secrets, imports }: Pick<SecretListing, 'secrets' | 'imports'>): ResolvedData {
  const data: Record<string, string> = {};
  for (const group of imports) {
    for (const secret of group.secrets) data[secret.key] = secret.value;
  }
  const depth = (path: string) => path.split('/').filter(Boolean).length;
  const nearestLast = [...secrets].sort((a, b) => depth(b.path) - depth(a.path));
  for (const secret of nearestLast) data[secret.key] = secret.value;
  const skipped = Object.keys(data)
    .filter((key) => !isSecretKey(key))
    .sort();
  for (const key of skipped) delete data[key];
  return { data, skipped };
}

/** The bytes the apiserver counts against MAX_SECRET_DATA_BYTES: every value, decoded. */
export function secretDataBytes(data: Record<string, string>): number {
  let bytes = 0;
  for (const value of Object.values(data)) bytes += Buffer.byteLength(value, 'utf8');
  return bytes;
}

/** A hash of the data that reveals nothing about the values (SHA-256 over sorted keys and values). */
export function dataHash(data: Record<string, string>): string {
  const hash = createHash('sha256');
  for (const key of Object.keys(data).sort()) hash.update(`${key.length}:${key}${data[key]!.length}:${data[key]}`);
  return `sha256:${hash.digest('hex').slice(0, 32)}`;
}

/** What a live Secret holds for `keys` (all keys when undefined), decoded. */
export function liveData(secret: V1Secret, keys?: readonly string[]): Record<string, string> {
  const data: Record<string, string> = {};
  for (const [key, value] of Object.entries(secret.data ?? {})) {
    if (!keys || keys.includes(key)) data[key] = Buffer.from(value, 'base64').toString('utf8');
  }
  return data;
}

/** The hash of what a live Secret holds for `keys` (base64 data decoded). */
export function liveDataHash(secret: V1Secret, keys?: readonly string[]): string {
  return dataHash(liveData(secret, keys));
}

export function policyOf(integration: IntegrationResource): CreationPolicy {
  return integration.spec.target.creationPolicy ?? 'Owner';
}

/**
 * The field manager an Integration applies with: `coffer` for the Secrets it
 * owns (Owner, Orphan); for Merge one of its own (`coffer/<name>`, hashed when
 * long), so that several Integrations merging into one Secret each own
 * exactly their keys, and server-side apply tells their conflicts apart.
 */
export function fieldManagerOf(integration: IntegrationResource): string {
  if (policyOf(integration) !== 'Merge') return FIELD_MANAGER;
  const { name } = integration.metadata;
  return `${MERGE_MANAGER_PREFIX}${name.length <= 100 ? name : `${name.slice(0, 80)}-${createHash('sha256').update(name).digest('hex').slice(0, 16)}`}`;
}

/** Field managers of Merge Integrations begin with this. */
export const MERGE_MANAGER_PREFIX = `${FIELD_MANAGER}/`;

/** Whether a field manager is one of Coffer's (an Integration's). */
export function isCofferManager(manager: string): boolean {
  return manager === FIELD_MANAGER || manager.startsWith(MERGE_MANAGER_PREFIX);
}

/**
 * Whether `secret` is this Integration's own (Owner/Orphan): its annotation
 * names the Integration (and no other installation), or the Integration is
 * its owner by uid. Never by the managed-by label alone, which anyone may remove.
 */
export function isOwnSecret(secret: V1Secret, integration: IntegrationResource, installationId: string): boolean {
  const annotations = secret.metadata?.annotations;
  const installation = annotations?.[ANNOTATION_INSTALLATION];
  if (installation && installation !== installationId) return false;
  if (annotations?.[ANNOTATION_INTEGRATION] === formatNamespacedName(integration.metadata)) return true;
  const uid = integration.metadata.uid;
  return uid !== undefined && (secret.metadata?.ownerReferences ?? []).some((reference) => reference.uid === uid);
}

/**
 * The Secret as an Integration applies it (server-side apply; fields it
 * leaves out are not its own). Owner and Orphan: the whole Secret, annotated
 * with its Integration, revision, data hash and installation. Merge: only its
 * keys, its spec's labels and annotations, and the installation; the
 * managed-by label unless the Secret carries someone else's.
 */
export function desiredSecret(integration: IntegrationResource, data: Record<string, string>, revision: Revision, installationId: string, live?: V1Secret): V1Secret {
  const { namespace, name, uid } = integration.metadata;
  const target = integration.spec.target;
  const policy = policyOf(integration);
  const encoded = Object.fromEntries(Object.entries(data).map(([key, value]) => [key, Buffer.from(value, 'utf8').toString('base64')]));
  if (policy === 'Merge') {
    const managedBy = live?.metadata?.labels?.[MANAGED_BY_LABEL];
    const label: Record<string, string> = managedBy === undefined || managedBy === 'coffer' ? { [MANAGED_BY_LABEL]: 'coffer' } : {};
    return {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: {
        name: target.name,
        namespace,
        labels: { ...target.labels, ...label },
        annotations: { ...target.annotations, [ANNOTATION_INSTALLATION]: installationId },
      },
      data: encoded,
    };
  }
  const owner: V1OwnerReference = { apiVersion: API_VERSION, kind: 'Integration', name, uid: uid!, controller: true, blockOwnerDeletion: true };
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: {
      name: target.name,
      namespace,
      labels: { ...target.labels, [MANAGED_BY_LABEL]: 'coffer' },
      annotations: {
        ...target.annotations,
        [ANNOTATION_INTEGRATION]: formatNamespacedName(integration.metadata),
        [ANNOTATION_REVISION]: String(revision),
        [ANNOTATION_DATA_HASH]: dataHash(data),
        [ANNOTATION_INSTALLATION]: installationId,
      },
      ...(policy === 'Owner' ? { ownerReferences: [owner] } : {}),
    },
    type: target.type ?? 'Opaque',
    data: encoded,
  };
}

/**
 * Whether `live` already is what `desired` asks for: the same data (for Merge,
 * the same values for its own keys; otherwise exactly these keys), every
 * label and annotation it sets (the revision aside: a newer revision with the
 * same data is no reason to write), its owner reference and type.
 */
export function isCurrent(live: V1Secret, desired: V1Secret, policy: CreationPolicy): boolean {
  const wanted = desired.data ?? {};
  const have = live.data ?? {};
  const keys = policy === 'Merge' ? Object.keys(wanted) : [...new Set([...Object.keys(wanted), ...Object.keys(have)])];
  if (keys.some((key) => wanted[key] !== have[key])) return false;
  const { labels = {}, annotations = {}, ownerReferences = [] } = desired.metadata ?? {};
  if (Object.entries(labels).some(([key, value]) => live.metadata?.labels?.[key] !== value)) return false;
  if (Object.entries(annotations).some(([key, value]) => key !== ANNOTATION_REVISION && live.metadata?.annotations?.[key] !== value)) return false;
  if (ownerReferences.some((owner) => !(live.metadata?.ownerReferences ?? []).some((reference) => reference.uid === owner.uid))) return false;
  return desired.type === undefined || (live.type ?? 'Opaque') === desired.type;
}

/** Applying this with an Integration's field manager gives up every field it owned (Merge cleanup). */
export function emptyApply(namespace: string, name: string): V1Secret {
  return { apiVersion: 'v1', kind: 'Secret', metadata: { name, namespace } };
}
