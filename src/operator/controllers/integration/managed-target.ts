import { createHash, createHmac, createSecretKey, type KeyObject } from 'node:crypto';
import type { V1OwnerReference } from '@kubernetes/client-node';
import type { Revision } from '../../port/coffer-port.ts';
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
  type TargetKind,
} from '../../resources.ts';
import type { OperatorInformers } from '../../runtime/informers.ts';
import type { TargetObject } from '../../runtime/kube-api.ts';
import { formatNamespacedName } from '../../runtime/object-key.ts';

/** Characters of a Secret or ConfigMap data key (the apiserver's ConfigMap key rule). */
const SECRET_KEY_CHARACTERS = /^[-._a-zA-Z0-9]+$/;
const SECRET_KEY_MAX_LENGTH = 253;

/** The apiserver refuses a Secret (or ConfigMap) whose values add up to more than this many bytes. */
export const MAX_TARGET_DATA_BYTES = 1024 * 1024;

/** Whether `key` can be a Secret or ConfigMap data key: ≤ 253 of [-._a-zA-Z0-9], not '.', not starting with '..' (the apiserver's rule). */
export function isDataKey(key: string): boolean {
  return key.length <= SECRET_KEY_MAX_LENGTH && SECRET_KEY_CHARACTERS.test(key) && key !== '.' && !key.startsWith('..');
}

/**
 * A record keyed by names from users (secret names, data keys): no
 * prototype, so that `constructor`, `toString` or `__proto__` are keys like
 * any other, never inherited members.
 */
export function emptyRecord(): Record<string, string> {
  return Object.create(null) as Record<string, string>;
}

export interface ResolvedData {
  data: Record<string, string>;
  /** Keys that cannot be data keys, left out (sorted). */
  skipped: string[];
}

/** The keys the apiserver takes as data keys, and the names it would refuse (sorted). */
export function withDataKeysOnly(values: Record<string, string>): ResolvedData {
  const data = emptyRecord();
  const skipped: string[] = [];
  for (const [key, value] of Object.entries(values)) {
    if (isDataKey(key)) data[key] = value;
    else skipped.push(key);
  }
  return { data, skipped: skipped.sort() };
}

/** The bytes the apiserver counts against MAX_TARGET_DATA_BYTES: every value, decoded. */
export function targetDataBytes(data: Record<string, string>): number {
  let bytes = 0;
  for (const value of Object.values(data)) bytes += Buffer.byteLength(value, 'utf8');
  return bytes;
}

/** What a data hash begins with (an unkeyed `sha256:` one is from before the key, and differs). */
const DATA_HASH_PREFIX = 'hmac-sha256:';

/**
 * The data hash of status.dataHash and the coffer.dev/data-hash annotation:
 * HMAC-SHA256 over sorted keys and values, keyed by a key derived from the
 * installation's digest key (installation-key.ts). Whoever may read the
 * Integration or the target's metadata cannot try values against it; the
 * same data gives the same hash in every replica and after every restart,
 * so a write that changes nothing is still skipped and drift still told.
 */
export class DataHasher {
  /** A KeyObject, not a Buffer: an HMAC keyed by a Buffer copies and checks the key on every hash. */
  readonly #key: KeyObject;

  constructor(installationKey: Buffer) {
    // its own key: a data hash and a reload checksum of the same data are not comparable
    this.#key = createSecretKey(createHmac('sha256', installationKey).update('coffer.dev/data-hash').digest());
  }

  hash(data: Record<string, string>): string {
    const hmac = createHmac('sha256', this.#key);
    for (const key of Object.keys(data).sort()) hmac.update(`${key.length}:${key}${data[key]!.length}:${data[key]}`);
    return `${DATA_HASH_PREFIX}${hmac.digest('hex').slice(0, 32)}`;
  }
}

export function targetKindOf(integration: IntegrationResource): TargetKind {
  return integration.spec.target.kind ?? 'Secret';
}

/** "Secret 'web'" or "ConfigMap 'web'": how messages name the target. */
export function describeTarget(integration: IntegrationResource): string {
  return `${targetKindOf(integration)} '${integration.spec.target.name}'`;
}

/** What a live Secret or ConfigMap holds for `keys` (all keys when undefined), Secret data decoded. */
export function liveData(object: TargetObject, keys?: readonly string[]): Record<string, string> {
  const data = emptyRecord();
  const decode = object.kind === 'ConfigMap' ? (value: string) => value : (value: string) => Buffer.from(value, 'base64').toString('utf8');
  for (const [key, value] of Object.entries(object.data ?? {})) {
    if (!keys || keys.includes(key)) data[key] = decode(value);
  }
  return data;
}

/**
 * Whether an Owner or Orphan target holds what `integration` last synced, as its own write left it: the data
 * hashes to the data-hash annotation (keyed: nobody without the installation key makes one that matches), that
 * hash is one of `ownHashes` (the one the Integration's status names, and the one a sync under way is writing
 * before its status names it), and the object is what a write of that data would make (isCurrent: labels,
 * annotations, owner, type). The watch sends each of the operator's own writes back as an update; such an update
 * is not drift and calls for no sync. A Merge target is shared, so never.
 */
export function holdsOwnSync(object: TargetObject, integration: IntegrationResource, installationId: string, hasher: DataHasher, ownHashes: readonly unknown[]): boolean {
  const policy = policyOf(integration);
  const hash = object.metadata?.annotations?.[ANNOTATION_DATA_HASH];
  if (policy === 'Merge' || hash === undefined || !ownHashes.includes(hash)) return false;
  const data = liveData(object);
  // the revision annotation is not compared (isCurrent): any one will do
  return hasher.hash(data) === hash && isCurrent(object, desiredTarget(integration, data, 0, installationId, hash), policy);
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
 * Whether `object` is this Integration's own (Owner/Orphan): its annotation
 * names the Integration (and no other installation), or the Integration is
 * its owner by uid. Never by the managed-by label alone, which anyone may remove.
 */
export function isOwnTarget(object: TargetObject, integration: IntegrationResource, installationId: string): boolean {
  const annotations = object.metadata?.annotations;
  const installation = annotations?.[ANNOTATION_INSTALLATION];
  if (installation && installation !== installationId) return false;
  if (annotations?.[ANNOTATION_INTEGRATION] === formatNamespacedName(integration.metadata)) return true;
  return ownedBy(object, integration.metadata.uid);
}

/** Whether `object` names the object of this uid among its ownerReferences. */
export function ownedBy(object: TargetObject, uid: string | undefined): boolean {
  return uid !== undefined && (object.metadata?.ownerReferences ?? []).some((reference) => reference.uid === uid);
}

/** The Integration's target as the informers cache it (the objects labelled as Coffer's), if there is one. */
export function cachedTarget(informers: Pick<OperatorInformers, 'managedSecrets' | 'managedConfigMaps'>, integration: IntegrationResource): TargetObject | undefined {
  const { namespace } = integration.metadata;
  const { name } = integration.spec.target;
  const kind = targetKindOf(integration);
  const cached = kind === 'Secret' ? informers.managedSecrets.get(name, namespace) : informers.managedConfigMaps.get(name, namespace);
  return cached && { ...cached, apiVersion: 'v1', kind };
}

/**
 * The other installation that claimed this Integration by creating its target: the target names the Integration
 * (annotation or ownerReference) and another installation. Undefined when it names this one, none, or another
 * Integration (then it is merely in the way: InstallationConflict on the Integration's status).
 */
export function claimedElsewhere(object: TargetObject, integration: IntegrationResource, installationId: string): string | undefined {
  const installation = object.metadata?.annotations?.[ANNOTATION_INSTALLATION];
  if (!installation || installation === installationId) return undefined;
  return isOwnTarget(object, integration, installation) ? installation : undefined;
}

/**
 * The Secret or ConfigMap as an Integration applies it (server-side apply;
 * fields it leaves out are not its own). Owner and Orphan: the whole object,
 * labelled and annotated as the spec and its template say, and with its
 * Integration, revision, data hash (`hash`, keyed) and installation. Merge: only its keys,
 * its spec's labels and annotations, and the installation; the managed-by
 * label unless the object carries someone else's. A Secret's data is base64.
 */
export function desiredTarget(
  integration: IntegrationResource,
  data: Record<string, string>,
  revision: Revision,
  installationId: string,
  hash: string,
  live?: Pick<TargetObject, 'metadata'>,
): TargetObject {
  const { namespace, name, uid } = integration.metadata;
  const target = integration.spec.target;
  const kind = targetKindOf(integration);
  const policy = policyOf(integration);
  const encoded = kind === 'Secret' ? Object.fromEntries(Object.entries(data).map(([key, value]) => [key, Buffer.from(value, 'utf8').toString('base64')])) : { ...data };
  const labels = { ...target.labels, ...target.template?.metadata?.labels };
  const annotations = { ...target.annotations, ...target.template?.metadata?.annotations };
  const typed = kind === 'Secret' ? { type: target.template?.type ?? target.type ?? 'Opaque' } : {};
  if (policy === 'Merge') {
    const managedBy = live?.metadata?.labels?.[MANAGED_BY_LABEL];
    const label: Record<string, string> = managedBy === undefined || managedBy === 'coffer' ? { [MANAGED_BY_LABEL]: 'coffer' } : {};
    return {
      apiVersion: 'v1',
      kind,
      metadata: { name: target.name, namespace, labels: { ...labels, ...label }, annotations: { ...annotations, [ANNOTATION_INSTALLATION]: installationId } },
      data: encoded,
    };
  }
  const owner: V1OwnerReference = { apiVersion: API_VERSION, kind: 'Integration', name, uid: uid!, controller: true, blockOwnerDeletion: true };
  return {
    apiVersion: 'v1',
    kind,
    metadata: {
      name: target.name,
      namespace,
      labels: { ...labels, [MANAGED_BY_LABEL]: 'coffer' },
      annotations: {
        ...annotations,
        [ANNOTATION_INTEGRATION]: formatNamespacedName(integration.metadata),
        [ANNOTATION_REVISION]: String(revision),
        [ANNOTATION_DATA_HASH]: hash,
        [ANNOTATION_INSTALLATION]: installationId,
      },
      ...(policy === 'Owner' ? { ownerReferences: [owner] } : {}),
    },
    ...typed,
    data: encoded,
  };
}

/**
 * Whether `live` already is what `desired` asks for: the same data (for Merge,
 * the same values for its own keys; otherwise exactly these keys), every
 * label and annotation it sets (the revision aside: a newer revision with the
 * same data is no reason to write), its owner reference and a Secret's type.
 */
export function isCurrent(live: TargetObject, desired: TargetObject, policy: CreationPolicy): boolean {
  const wanted = desired.data ?? {};
  const have = live.data ?? {};
  const keys = policy === 'Merge' ? Object.keys(wanted) : [...new Set([...Object.keys(wanted), ...Object.keys(have)])];
  if (keys.some((key) => ownValue(wanted, key) !== ownValue(have, key))) return false;
  const { labels = {}, annotations = {}, ownerReferences = [] } = desired.metadata ?? {};
  if (Object.entries(labels).some(([key, value]) => live.metadata?.labels?.[key] !== value)) return false;
  if (Object.entries(annotations).some(([key, value]) => key !== ANNOTATION_REVISION && live.metadata?.annotations?.[key] !== value)) return false;
  if (ownerReferences.some((owner) => !ownedBy(live, owner.uid))) return false;
  return !hasTypeChanged(live, desired);
}

/** The record's own value for `key` (never an inherited member such as `constructor`). */
export function ownValue(record: Readonly<Record<string, string>>, key: string): string | undefined {
  return Object.hasOwn(record, key) ? record[key] : undefined;
}

/** Whether a Secret's type differs from the one wanted (the apiserver never changes it in place). */
export function hasTypeChanged(live: TargetObject, desired: TargetObject): boolean {
  const wanted = 'type' in desired ? desired.type : undefined;
  return wanted !== undefined && (('type' in live ? live.type : undefined) ?? 'Opaque') !== wanted;
}

/** Applying this with an Integration's field manager gives up every field it owned (Merge cleanup). */
export function emptyApply(kind: TargetKind, namespace: string, name: string): TargetObject {
  return { apiVersion: 'v1', kind, metadata: { name, namespace } };
}
