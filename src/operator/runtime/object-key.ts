import type { KubernetesObject } from '@kubernetes/client-node';
import type { KindName } from '../resources.ts';

/** A namespaced object's name, as a reconcile request names it. */
export interface NamespacedName {
  readonly namespace: string;
  readonly name: string;
}

/** What a work item is about: one resource of one kind. Built from its parts, never parsed back from a string. */
export interface ObjectKey extends NamespacedName {
  readonly kind: KindName;
}

export function objectKey(kind: KindName, { namespace, name }: NamespacedName): ObjectKey {
  return { kind, namespace, name };
}

export function keyOf(kind: KindName, object: KubernetesObject): ObjectKey {
  return { kind, namespace: object.metadata!.namespace!, name: object.metadata!.name! };
}

/** The key's identity in the work queue (dedupe), not meant to be read back. */
export function queueId(key: ObjectKey): string {
  return `${key.kind}\u0000${key.namespace}\u0000${key.name}`;
}

/** "<namespace>/<name>", as kubectl prints it: what a managed Secret's annotation and an integration record's managedBy hold. */
export function formatNamespacedName({ namespace, name }: NamespacedName): string {
  return `${namespace}/${name}`;
}

/** The inverse of formatNamespacedName, for values read back from an object (undefined when malformed). */
export function parseNamespacedName(value: string): NamespacedName | undefined {
  const [namespace, name, ...rest] = value.split('/');
  if (!namespace || !name || rest.length > 0) return undefined;
  return { namespace, name };
}
