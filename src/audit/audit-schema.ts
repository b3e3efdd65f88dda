import { z } from 'zod';
import type { Selectable } from 'kysely';
import type { AuditLogsTable } from '../db/schema.ts';
import { BadRequestError } from '../errors.ts';

export const USER_AGENT_TYPES = [
  'web',
  'cli',
  'k8-operator',
  'terraform',
  'other',
  'ServicePythonSDK',
  'ServiceNodeSDK',
  'InfisicalPythonSDK',
  'InfisicalNodeSDK',
] as const;

/** The seed names the SDKs Service*SDK; the reference's clients send Infisical*SDK. A filter on either matches both. */
const SDK_SPELLINGS: Record<string, string[]> = {
  ServicePythonSDK: ['ServicePythonSDK', 'InfisicalPythonSDK'],
  InfisicalPythonSDK: ['ServicePythonSDK', 'InfisicalPythonSDK'],
  ServiceNodeSDK: ['ServiceNodeSDK', 'InfisicalNodeSDK'],
  InfisicalNodeSDK: ['ServiceNodeSDK', 'InfisicalNodeSDK'],
};

export function userAgentTypesMatching(filter: string | undefined): string[] | undefined {
  if (!filter) return undefined;
  return SDK_SPELLINGS[filter] ?? [filter];
}

export const auditLogSchema = z.object({
  id: z.string(),
  ipAddress: z.string().nullable(),
  userAgent: z.string().nullable(),
  userAgentType: z.string().nullable(),
  expiresAt: z.string().nullable(),
  createdAt: z.string(),
  updatedAt: z.string(),
  orgId: z.string().nullable(),
  projectId: z.string().nullable(),
  projectName: z.string().nullable(),
  event: z.object({ type: z.string(), metadata: z.unknown() }),
  actor: z.object({ type: z.string(), metadata: z.unknown() }),
});

export type AuditLogEntry = z.infer<typeof auditLogSchema>;

export function toAuditLogEntry(row: Selectable<AuditLogsTable>): AuditLogEntry {
  return {
    id: row.id,
    ipAddress: row.ipAddress,
    userAgent: row.userAgent,
    userAgentType: row.userAgentType,
    expiresAt: row.expiresAt?.toISOString() ?? null,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
    orgId: row.orgId,
    projectId: row.projectId,
    projectName: row.projectName,
    event: { type: row.eventType, metadata: row.eventMetadata },
    actor: { type: row.actor, metadata: row.actorMetadata },
  };
}

/** An opaque position after the last entry of a page: its timestamp and id. */
export function encodeCursor(entry: { createdAt: Date; id: string }): string {
  return Buffer.from(`${entry.createdAt.toISOString()}|${entry.id}`).toString('base64url');
}

export function decodeCursor(cursor: string): { createdAt: Date; id: string } {
  const [time, id] = Buffer.from(cursor, 'base64url').toString('utf8').split('|');
  const createdAt = new Date(time ?? '');
  if (!id || Number.isNaN(createdAt.getTime())) throw new BadRequestError('The cursor is not one this service returned', 'InvalidCursor');
  return { createdAt, id };
}

/** "k1=v1,k2=v2" → {k1: "v1", k2: "v2"}. */
export function parseEventMetadataFilter(text: string | undefined): Record<string, string> | undefined {
  if (!text) return undefined;
  const pairs = text.split(',').map((pair) => pair.split('='));
  if (pairs.some((pair) => pair.length !== 2 || !pair[0])) {
    throw new BadRequestError("eventMetadata must look like 'key1=value1,key2=value2'", 'InvalidEventMetadataFilter');
  }
  return Object.fromEntries(pairs.map(([key, value]) => [key!.trim(), value!.trim()]));
}
