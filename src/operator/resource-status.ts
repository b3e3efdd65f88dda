import { isDeepStrictEqual } from 'node:util';
import type { OperatorContext } from './context.ts';
import { isNotFound } from './kube-api.ts';
import { type Condition, FINALIZER, type KindName, setCondition } from './resources.ts';

interface AnyResource {
  metadata: { name: string; namespace: string; finalizers?: string[]; resourceVersion?: string; generation?: number };
  status?: { conditions?: Condition[] } & Record<string, unknown>;
}

export async function ensureFinalizer(context: OperatorContext, kind: KindName, resource: AnyResource): Promise<void> {
  const finalizers = resource.metadata.finalizers ?? [];
  if (finalizers.includes(FINALIZER)) return;
  const { namespace, name, resourceVersion } = resource.metadata;
  await context.kube.setFinalizers(kind, namespace, name, [...finalizers, FINALIZER], resourceVersion);
}

export async function removeFinalizer(context: OperatorContext, kind: KindName, resource: AnyResource): Promise<void> {
  const finalizers = resource.metadata.finalizers ?? [];
  if (!finalizers.includes(FINALIZER)) return;
  const { namespace, name, resourceVersion } = resource.metadata;
  try {
    await context.kube.setFinalizers(kind, namespace, name, finalizers.filter((finalizer) => finalizer !== FINALIZER), resourceVersion);
  } catch (error) {
    if (!isNotFound(error)) throw error;
  }
}

export interface ConditionUpdate {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  reason: string;
  message: string;
}

/**
 * Patches the status subresource with these fields and conditions (each
 * stamped with the observed generation); skips the write when nothing would change.
 */
export async function writeStatus(
  context: OperatorContext,
  kind: KindName,
  resource: AnyResource,
  fields: Record<string, unknown>,
  conditions: ConditionUpdate[],
): Promise<void> {
  const observedGeneration = resource.metadata.generation;
  let nextConditions = resource.status?.conditions;
  for (const condition of conditions) nextConditions = setCondition(nextConditions, { ...condition, observedGeneration });
  const next = { ...resource.status, ...fields, conditions: nextConditions, observedGeneration };
  if (isDeepStrictEqual(stripVolatile(next), stripVolatile(resource.status ?? {}))) return;
  const { namespace, name } = resource.metadata;
  try {
    await context.kube.patchStatus(kind, namespace, name, next);
  } catch (error) {
    if (!isNotFound(error)) throw error;
  }
}

/** Sync timestamps alone do not warrant a write. */
function stripVolatile(status: Record<string, unknown>): Record<string, unknown> {
  const { lastSyncTime: _ignored, ...rest } = status;
  return JSON.parse(JSON.stringify(rest));
}
