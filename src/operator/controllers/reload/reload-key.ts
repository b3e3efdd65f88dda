import { randomBytes } from 'node:crypto';
import type { V1Secret } from '@kubernetes/client-node';
import { ABSENT, isConflict, type KubeApi } from '../../runtime/kube-api.ts';

/** The Secret, in the operator's namespace, that holds the installation's digest key (installation-key.ts): reload checksums and data hashes. */
export const RELOAD_KEY_SECRET = 'coffer-reload-key';

/**
 * The installation's digest key (the reload checksums, the data hashes): read
 * from its Secret, or made once (a create that loses to another replica's
 * reads theirs). Kept in the cluster so every replica and every restart
 * computes the same digests. (Named for its first use; kept so for the
 * installations that have it.)
 */
export async function loadReloadKey(kube: KubeApi, namespace: string): Promise<Buffer> {
  const existing = await kube.readTarget('Secret', namespace, RELOAD_KEY_SECRET);
  const stored = keyOf(existing);
  if (stored) return stored;
  const secret: V1Secret = {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: RELOAD_KEY_SECRET, namespace, labels: { 'app.kubernetes.io/part-of': 'coffer' } },
    data: { key: randomBytes(32).toString('base64') },
  };
  try {
    return keyOf(await kube.applyTarget(secret, { expectedVersion: existing?.metadata?.resourceVersion ?? ABSENT }))!;
  } catch (error) {
    if (!isConflict(error)) throw error;
    const theirs = keyOf(await kube.readTarget('Secret', namespace, RELOAD_KEY_SECRET));
    if (!theirs) throw error;
    return theirs;
  }
}

function keyOf(secret: V1Secret | undefined): Buffer | undefined {
  const encoded = secret?.data?.key;
  if (!encoded) return undefined;
  const key = Buffer.from(encoded, 'base64');
  return key.length >= 32 ? key : undefined;
}
