import { ProjectCipher } from '../crypto/project-cipher.ts';
import type { Project, Webhook } from '../db/schema.ts';
import { SIGNATURE_HEADER, signDelivery } from '../outbound/delivery-signature.ts';
import type { Outbound, OutboundResult } from '../outbound/outbound.ts';
import type { ServiceDeps } from '../services/deps.ts';

/** What delivers: milliseconds since the epoch (tests inject a clock that moves only when they say). */
export interface DeliveryClock {
  now(): number;
}

/** The signing key of a webhook, sealed with its project's key and bound to the webhook's project. */
export function webhookKeyContext(projectId: string): string {
  return `coffer:webhook:${projectId}:signing-key`;
}

/**
 * POSTs `payload` (with the time it is sent) to the webhook's receiver, signed with its key: the one way a delivery,
 * of a change or a test, is made.
 */
export function postSigned(
  deps: Pick<ServiceDeps, 'keyring'>,
  outbound: Outbound,
  webhook: Webhook,
  project: Project,
  payload: Record<string, unknown>,
  timestamp: number,
): Promise<OutboundResult> {
  const secretKey = new ProjectCipher(deps.keyring, project).open(webhookKeyContext(project.id), webhook.encryptedSecretKey);
  const body = JSON.stringify({ ...payload, timestamp });
  return outbound.post(webhook.url, body, { [SIGNATURE_HEADER]: signDelivery(secretKey, timestamp, body), 'x-coffer-webhook-id': webhook.id });
}
