import { z } from 'zod';
import type { AuditLogStream } from '../db/schema.ts';

export const auditLogStreamSchema = z.object({
  id: z.string(),
  orgId: z.string(),
  url: z.string(),
  headerKeys: z.array(z.string()).describe('The names of the headers sent with every delivery; their values are never answered.'),
  status: z.object({
    lastDeliveredId: z.string().nullable().describe('The id of the newest audit entry the receiver acknowledged (2xx).'),
    lastDeliveredAt: z.string().nullable(),
    consecutiveFailures: z.number().int().describe('Failed deliveries since the last acknowledged one.'),
    lastError: z.string().nullable().describe('Why the last delivery failed, as one of a fixed set of sentences; null after a success.'),
    lastErrorAt: z.string().nullable(),
    nextAttemptAt: z.string().describe('When the stream is due again (after a failure: the end of its backoff).'),
  }),
  createdAt: z.string(),
  updatedAt: z.string(),
});
export type AuditLogStreamView = z.infer<typeof auditLogStreamSchema>;

export function toAuditLogStreamView(stream: AuditLogStream): AuditLogStreamView {
  return {
    id: stream.id,
    orgId: stream.orgId,
    url: stream.url,
    headerKeys: stream.headerKeys,
    status: {
      lastDeliveredId: stream.lastDeliveredId,
      lastDeliveredAt: stream.lastDeliveredAt?.toISOString() ?? null,
      consecutiveFailures: stream.consecutiveFailures,
      lastError: stream.lastError,
      lastErrorAt: stream.lastErrorAt?.toISOString() ?? null,
      nextAttemptAt: new Date(stream.nextAttemptAt).toISOString(),
    },
    createdAt: new Date(stream.createdAt).toISOString(),
    updatedAt: new Date(stream.updatedAt).toISOString(),
  };
}
