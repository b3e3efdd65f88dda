import type { Revision } from '../../port/coffer-port.ts';
import type { IntegrationResource, KeyCollision } from '../../resources.ts';
import type { ControllerContext } from '../context.ts';
import { describeTarget } from './managed-target.ts';
import type { WriteOutcome } from './target-object.ts';

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
  const target = describeTarget(resource);
  const kind = resource.spec.target.kind ?? 'Secret';
  const { namespace } = resource.metadata;
  if (outcome.kind === 'unchanged') {
    logger.debug(
      { namespace, [kind === 'Secret' ? 'secret' : 'configMap']: name, revision },
      `${kind} ${namespace}/${name} already holds revision ${revision}; nothing written`,
    );
    return;
  }
  if (changedAt) metrics?.changeReachedSecret((Date.now() - changedAt.getTime()) / 1000);
  const fields = { namespace, [kind === 'Secret' ? 'secret' : 'configMap']: name, integration: resource.metadata.name, revision, keys };
  if (outcome.kind === 'repaired') {
    events.record(resource, 'Normal', 'DriftRepaired', `${target} ${outcome.drift} and has been restored`);
    logger.info(fields, `${kind} ${namespace}/${name} ${outcome.drift}; restored (revision ${revision})`);
  } else if (outcome.kind === 'retyped') {
    events.record(
      resource,
      'Normal',
      'Synced',
      `${target} recreated as type ${resource.spec.target.template?.type ?? resource.spec.target.type ?? 'Opaque'} at revision ${revision} (${keys} keys; Kubernetes never changes a Secret's type in place)`,
    );
    logger.info(fields, `${kind} ${namespace}/${name} recreated with another type at revision ${revision} (${keys} keys)`);
  } else {
    // a first write is told by the status (Ready/Synced, syncedRevision): an Event for each would be one more
    // apiserver request per Integration when a fleet starts, for what every one of them does
    if (outcome.kind === 'updated') events.record(resource, 'Normal', 'Synced', `${target} updated to revision ${revision} (${keys} keys)`);
    logger.info(fields, `${kind} ${namespace}/${name} written at revision ${revision} (${keys} keys)`);
  }
}

/**
 * The revision the status names, and when the target was last written. A
 * sync that wrote the target names the revision it read at (the data is
 * current at it, as the integration record and the revision barrier say); so
 * does one after a change to its sources newer than what the status and the
 * target's annotation name (the data was already current: read after the
 * change committed). Any other sync (a resync, a retry) keeps the newer of
 * those two: the status lags the target when a write went through and its
 * status write did not, and a resync after a restart must not move it (it
 * reads at the newest revision of the whole installation).
 */
export function syncedFields(
  current: Readonly<Record<string, unknown>>,
  outcome: Pick<WriteOutcome, 'kind' | 'heldRevision'>,
  revision: Revision,
  lastChange: Revision,
  now = new Date(),
): { syncedRevision: Revision; lastSyncTime?: string } {
  const previous = typeof current.syncedRevision === 'number' ? current.syncedRevision : undefined;
  const written = outcome.kind !== 'unchanged';
  const kept = Math.max(previous ?? 0, outcome.heldRevision ?? 0);
  const syncedRevision = written || kept === 0 || lastChange > kept ? revision : kept;
  const moved = written || syncedRevision !== previous || current.lastSyncTime === undefined;
  return { syncedRevision, ...(moved ? { lastSyncTime: now.toISOString() } : {}) };
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
    `${skipped.length} key${skipped.length === 1 ? '' : 's'} of the source cannot be data keys (at most 253 of letters, digits, '-', '_', '.'; not '.' or starting with '..') and were left out of ${describeTarget(resource)}: ${namesOf(skipped)}`,
  );
}

/**
 * One Event when the set of collisions changes: which names more than one
 * place gave (different) values for, and whose value the target holds. Names
 * and places only. Normal, not Warning: the documented precedence decided.
 */
export function reportCollisions(context: ControllerContext, resource: IntegrationResource, collisions: readonly KeyCollision[]): void {
  const before = JSON.stringify(resource.status?.collisions ?? []);
  if (collisions.length === 0 || JSON.stringify(collisions.slice(0, SKIPPED_KEYS_KEPT)) === before) return;
  const shown = collisions
    .slice(0, SKIPPED_NAMES_SHOWN)
    .map(({ key, winner, overridden }) => `'${shorten(key)}' from ${winner} over ${overridden.join(', ')}`)
    .join('; ');
  const more = collisions.length - SKIPPED_NAMES_SHOWN;
  context.events.record(
    resource,
    'Normal',
    'KeyCollision',
    `${collisions.length} key${collisions.length === 1 ? '' : 's'} of ${describeTarget(resource)} came from more than one place; the later source (or the folder's own secret, the nearer folder, the last import) wins: ${shown}${more > 0 ? `, and ${more} more` : ''} (status.collisions lists them)`,
  );
}

/** The Ready message of a sync: how many keys, which were left out, and how many collided. */
export function syncedMessage(keys: number, skipped: readonly string[], collisions: readonly KeyCollision[] = []): string {
  const parts = [`${keys} keys synced`];
  if (skipped.length > 0) parts.push(`left out ${skipped.length} that cannot be data keys: ${namesOf(skipped)}`);
  if (collisions.length > 0) parts.push(`${collisions.length} given by more than one place (see status.collisions)`);
  return parts.join('; ');
}

/** The first names, each at most 64 characters, and how many more. */
function namesOf(skipped: readonly string[]): string {
  const quote = (key: string) => `'${shorten(key)}'`;
  const more = skipped.length - SKIPPED_NAMES_SHOWN;
  return skipped.slice(0, SKIPPED_NAMES_SHOWN).map(quote).join(', ') + (more > 0 ? `, and ${more} more` : '');
}

function shorten(key: string): string {
  return key.length > 64 ? `${key.slice(0, 64)}…` : key;
}
