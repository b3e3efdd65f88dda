import { createHash } from 'node:crypto';
import type { V1OwnerReference, V1Secret } from '@kubernetes/client-node';
import type { Revision, SecretListing } from '../../port/coffer-port.ts';
import {
  ANNOTATION_DATA_HASH,
  ANNOTATION_INSTALLATION,
  ANNOTATION_INTEGRATION,
  ANNOTATION_REVISION,
  API_VERSION,
  type IntegrationResource,
  MANAGED_BY_LABEL,
} from '../../resources.ts';
import { formatNamespacedName } from '../../runtime/object-key.ts';

/** Data keys of a Kubernetes Secret: letters, digits, '-', '_' and '.'. */
const SECRET_DATA_KEY = /^[-._a-zA-Z0-9]+$/;

export interface ResolvedData {
  data: Record<string, string>;
  /** Keys that cannot be Secret data keys, left out. */
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
  const skipped = Object.keys(data).filter((key) => !SECRET_DATA_KEY.test(key));
  for (const key of skipped) delete data[key];
  return { data, skipped };
}

/** A hash of the data that reveals nothing about the values (SHA-256 over sorted keys and values). */
export function dataHash(data: Record<string, string>): string {
  const hash = createHash('sha256');
  for (const key of Object.keys(data).sort()) hash.update(`${key.length}:${key}${data[key]!.length}:${data[key]}`);
  return `sha256:${hash.digest('hex').slice(0, 32)}`;
}

/** The hash of what a live Secret holds for `keys` (base64 data decoded). */
export function liveDataHash(secret: V1Secret, keys?: string[]): string {
  const data: Record<string, string> = {};
  for (const [key, value] of Object.entries(secret.data ?? {})) {
    if (!keys || keys.includes(key)) data[key] = Buffer.from(value, 'base64').toString('utf8');
  }
  return dataHash(data);
}

/** The Secret as Coffer applies it (server-side apply; fields it leaves out are not its own), marked with its installation. */
export function desiredSecret(integration: IntegrationResource, data: Record<string, string>, revision: Revision, installationId: string): V1Secret {
  const { namespace, name, uid } = integration.metadata;
  const target = integration.spec.target;
  const policy = target.creationPolicy ?? 'Owner';
  const owner: V1OwnerReference = { apiVersion: API_VERSION, kind: 'Integration', name, uid: uid!, controller: true, blockOwnerDeletion: true };
  const secret: V1Secret = {
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
    stringData: undefined,
    data: Object.fromEntries(Object.entries(data).map(([key, value]) => [key, Buffer.from(value, 'utf8').toString('base64')])),
  };
  if (policy !== 'Merge') secret.type = target.type ?? 'Opaque';
  return secret;
}

/** Applying this with Coffer's field manager gives up every field Coffer owned (Merge policy cleanup). */
export function emptyApply(namespace: string, name: string): V1Secret {
  return { apiVersion: 'v1', kind: 'Secret', metadata: { name, namespace } };
}
