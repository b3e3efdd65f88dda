import type { Revision } from '../../port/coffer-port.ts';
import type { IntegrationResource } from '../../resources.ts';
import type { ControllerContext } from '../context.ts';
import type { WriteOutcome } from './target-secret.ts';

/** Names of skipped keys quoted in a status message or Event, at most; and kept in status.skippedKeys. */
const SKIPPED_NAMES_SHOWN = 20;
export const SKIPPED_KEYS_KEPT = 100;

/**
 * What a sync tells beyond its status: the Event and log line of a write (or
 * a debug line when nothing was written), the change-to-Secret latency it
 * ends (`changedAt`: when the earliest change it carries was committed).
 */
export function reportWrite(
  context: ControllerContext,
  resource: IntegrationResource,
  outcome: WriteOutcome,
  keys: number,
  revision: Revision,
  changedAt: Date | undefined,
): void {
  const { events, logger, metrics } = context;
  const name = resource.spec.target.name;
  const { namespace } = resource.metadata;
  if (outcome.kind === 'unchanged') {
    logger.debug({ namespace, secret: name, revision }, `Secret ${namespace}/${name} already holds revision ${revision}; nothing written`);
    return;
  }
  if (changedAt) metrics?.changeReachedSecret((Date.now() - changedAt.getTime()) / 1000);
  const fields = { namespace, secret: name, integration: resource.metadata.name, revision, keys };
  if (outcome.kind === 'repaired') {
    events.record(resource, 'Normal', 'DriftRepaired', `Secret '${name}' ${outcome.drift} and has been restored`);
    logger.info(fields, `Secret ${namespace}/${name} ${outcome.drift}; restored (revision ${revision})`);
  } else {
    events.record(resource, 'Normal', 'Synced', `Secret '${name}' updated to revision ${revision} (${keys} keys)`);
    logger.info(fields, `Secret ${namespace}/${name} written at revision ${revision} (${keys} keys)`);
  }
}

/** One Warning Event when the set of keys left out changes (names only, never values). */
export function reportSkipped(context: ControllerContext, resource: IntegrationResource, skipped: readonly string[]): void {
  const before = resource.status?.skippedKeys ?? [];
  const kept = skipped.slice(0, SKIPPED_KEYS_KEPT);
  if (kept.length === 0 || (kept.length === before.length && kept.every((key, index) => key === before[index]))) return;
  context.events.record(
    resource,
    'Warning',
    'KeysSkipped',
    `${skipped.length} key${skipped.length === 1 ? '' : 's'} of the source cannot be Secret data keys (at most 253 of letters, digits, '-', '_', '.'; not '.' or starting with '..') and were left out of Secret '${resource.spec.target.name}': ${namesOf(skipped)}`,
  );
}

/** The Ready message of a sync: how many keys, and which were left out. */
export function syncedMessage(keys: number, skipped: readonly string[]): string {
  return skipped.length > 0 ? `${keys} keys synced; left out ${skipped.length} that cannot be Secret keys: ${namesOf(skipped)}` : `${keys} keys synced`;
}

/** The first names, each at most 64 characters, and how many more. */
function namesOf(skipped: readonly string[]): string {
  const quote = (key: string) => `'${key.length > 64 ? `${key.slice(0, 64)}…` : key}'`;
  const more = skipped.length - SKIPPED_NAMES_SHOWN;
  return skipped.slice(0, SKIPPED_NAMES_SHOWN).map(quote).join(', ') + (more > 0 ? `, and ${more} more` : '');
}
