import type { V1PodSpec } from '@kubernetes/client-node';
import type { TargetKind } from '../../resources.ts';

/** Which keys of one Secret or ConfigMap a pod template reads: all of them, or these. */
export type ConsumedKeys = 'all' | ReadonlySet<string>;

/** A Secret or ConfigMap by kind and name ("Secret/app-secrets"): what a pod template refers to. */
export type TargetRef = `${TargetKind}/${string}`;

export function targetRef(kind: TargetKind, name: string): TargetRef {
  return `${kind}/${name}`;
}

/**
 * The Secrets and ConfigMaps a pod template reads, and which of their keys:
 * env valueFrom secretKeyRef / configMapKeyRef (that key), envFrom secretRef /
 * configMapRef (every key), and volumes (secret, configMap and projected
 * sources: every key, or only the keys their `items` list) — in containers,
 * init containers and ephemeral containers alike. Optional references count:
 * the pod reads the key when it is there.
 */
export function consumedKeys(spec: V1PodSpec | undefined): Map<TargetRef, ConsumedKeys> {
  const consumed = new Map<TargetRef, ConsumedKeys>();
  const add = (ref: TargetRef, keys: ConsumedKeys) => consumed.set(ref, merge(consumed.get(ref), keys));
  for (const container of [...(spec?.containers ?? []), ...(spec?.initContainers ?? []), ...(spec?.ephemeralContainers ?? [])]) {
    for (const { valueFrom } of container.env ?? []) {
      if (valueFrom?.secretKeyRef?.name) add(targetRef('Secret', valueFrom.secretKeyRef.name), new Set([valueFrom.secretKeyRef.key]));
      if (valueFrom?.configMapKeyRef?.name) add(targetRef('ConfigMap', valueFrom.configMapKeyRef.name), new Set([valueFrom.configMapKeyRef.key]));
    }
    for (const source of container.envFrom ?? []) {
      if (source.secretRef?.name) add(targetRef('Secret', source.secretRef.name), 'all');
      if (source.configMapRef?.name) add(targetRef('ConfigMap', source.configMapRef.name), 'all');
    }
  }
  for (const volume of spec?.volumes ?? []) {
    if (volume.secret?.secretName) add(targetRef('Secret', volume.secret.secretName), itemKeys(volume.secret.items));
    if (volume.configMap?.name) add(targetRef('ConfigMap', volume.configMap.name), itemKeys(volume.configMap.items));
    for (const source of volume.projected?.sources ?? []) {
      if (source.secret?.name) add(targetRef('Secret', source.secret.name), itemKeys(source.secret.items));
      if (source.configMap?.name) add(targetRef('ConfigMap', source.configMap.name), itemKeys(source.configMap.items));
    }
  }
  return consumed;
}

/** The keys a consumer reads of `data` (every key, or the listed ones that exist). */
export function keysRead(consumed: ConsumedKeys, data: Record<string, string>): string[] {
  const keys = consumed === 'all' ? Object.keys(data) : [...consumed];
  return keys.sort();
}

function itemKeys(items: { key: string }[] | undefined): ConsumedKeys {
  return items && items.length > 0 ? new Set(items.map((item) => item.key)) : 'all';
}

function merge(before: ConsumedKeys | undefined, next: ConsumedKeys): ConsumedKeys {
  if (before === undefined) return next;
  if (before === 'all' || next === 'all') return 'all';
  return new Set([...before, ...next]);
}
