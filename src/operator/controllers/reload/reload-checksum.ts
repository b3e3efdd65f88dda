import { createHash, createHmac, createSecretKey, type KeyObject } from 'node:crypto';
import type { TargetRef } from './consumed-keys.ts';

/** On a Deployment, StatefulSet or DaemonSet: "true" rolls it when a key it consumes of any Coffer-managed Secret or ConfigMap changes. */
export const RELOAD_OPT_IN_ANNOTATION = 'coffer.dev/reload';

const CHECKSUM_PREFIX = 'checksum.coffer.dev/';
/** Kubernetes allows 63 characters after the prefix of an annotation key. */
const NAME_PART_MAX = 63;

/**
 * The annotation that holds, for one Secret or ConfigMap a workload
 * consumes, the keyed hash of the data it reads: on the workload's metadata
 * (what the workload was last seen or rolled with; setting it rolls nothing)
 * and on its pod template (setting that is the rollout).
 */
export function checksumAnnotation(ref: TargetRef): string {
  const [kind, name] = splitRef(ref);
  const part = `${kind.toLowerCase()}-${name}`;
  if (part.length <= NAME_PART_MAX) return `${CHECKSUM_PREFIX}${part}`;
  const digest = createHash('sha256').update(part).digest('hex').slice(0, 12);
  return `${CHECKSUM_PREFIX}${part.slice(0, NAME_PART_MAX - 13).replace(/[-.]+$/, '')}-${digest}`;
}

function splitRef(ref: TargetRef): [string, string] {
  const slash = ref.indexOf('/');
  return [ref.slice(0, slash), ref.slice(slash + 1)];
}

/**
 * HMAC-SHA256 of the data a workload reads, keyed by the installation's
 * reload key (reload-key.ts): a plain hash of a short value on a Deployment
 * could be brute-forced by anyone allowed to read Deployments. The same data
 * gives the same checksum in every replica and after every restart.
 */
export class ReloadHasher {
  /** A KeyObject: an HMAC keyed by a Buffer copies and checks the key on every checksum. */
  readonly #key: KeyObject;

  constructor(key: Buffer) {
    this.#key = createSecretKey(key);
  }

  checksum(data: Record<string, string>, keys: readonly string[]): string {
    const hmac = createHmac('sha256', this.#key);
    for (const key of keys) {
      const value = Object.hasOwn(data, key) ? data[key] : undefined;
      // a missing key and an empty one differ
      hmac.update(value === undefined ? `${key.length}:${key}-` : `${key.length}:${key}${value.length}:${value}`);
    }
    return hmac.digest('hex').slice(0, 32);
  }
}
