import type { KubernetesObject } from '@kubernetes/client-node';
import { isDeepStrictEqual } from 'node:util';
import { AppError } from '../errors.ts';
import { NotReadyError, type OperatorContext } from './context.ts';
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
    return;
  }
  logReadyChange(context, kind, resource, conditions.find((condition) => condition.type === 'Ready'));
}

/** One info line when a resource becomes Ready or stops being Ready (or for another reason), never per retry. */
function logReadyChange(context: OperatorContext, kind: KindName, resource: AnyResource, ready: ConditionUpdate | undefined): void {
  if (!ready) return;
  const before = resource.status?.conditions?.find((condition) => condition.type === 'Ready');
  if (before?.status === ready.status && before.reason === ready.reason) return;
  const { namespace, name } = resource.metadata;
  const fields = { kind, namespace, name, reason: ready.reason };
  if (ready.status === 'True') context.logger.info(fields, `${kind} ${namespace}/${name} is Ready (${ready.reason}): ${ready.message}`);
  else context.logger.info(fields, `${kind} ${namespace}/${name} is not Ready (${ready.reason}): ${ready.message}`);
}

/** Sync timestamps alone do not warrant a write. */
function stripVolatile(status: Record<string, unknown>): Record<string, unknown> {
  const { lastSyncTime: _ignored, ...rest } = status;
  return JSON.parse(JSON.stringify(rest));
}

/**
 * A reconcile that failed because something is not ready yet or the API refused it: Ready=False with
 * the reason, a Warning Event, and when to try again. Any other error is thrown on (the queue backs off).
 */
export async function reportNotReady(context: OperatorContext, kind: KindName, resource: AnyResource & KubernetesObject, error: unknown): Promise<number | undefined> {
  if (!(error instanceof NotReadyError) && !(error instanceof AppError && error.statusCode < 500)) throw error;
  const reason = error instanceof NotReadyError ? error.reason : 'Rejected';
  await writeStatus(context, kind, resource, {}, [{ type: 'Ready', status: 'False', reason, message: error.message }]);
  context.events.record(resource, 'Warning', reason, error.message);
  return error instanceof NotReadyError ? error.retryInMs : 60_000;
}
