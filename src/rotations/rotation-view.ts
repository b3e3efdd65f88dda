import type { RotationRow } from './rotation-store.ts';
import type { RotateAtUtc, RotationType, SecretRotationResponse } from './rotation-schema.ts';

const iso = (date: Date | null) => (date ? date.toISOString() : null);

/** A rotation as the API shows it: settings and state, never a generated value. */
export function toRotationResponse(row: RotationRow): SecretRotationResponse {
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    type: row.type as RotationType,
    projectId: row.projectId,
    connectionId: row.connectionId,
    connection: row.connectionId && row.connectionName ? { app: 'postgres', name: row.connectionName, id: row.connectionId } : null,
    environment: { slug: row.environmentSlug, name: row.environmentName, id: row.environmentId },
    folder: { id: row.folderId, path: row.secretPath },
    parameters: row.parameters as Record<string, unknown>,
    secretsMapping: row.secretsMapping as Record<string, string>,
    isAutoRotationEnabled: row.isAutoRotationEnabled,
    rotationInterval: row.rotationInterval,
    rotateAtUtc: row.rotateAtUtc as RotateAtUtc,
    activeIndex: row.activeIndex,
    rotationStatus: row.rotationStatus as SecretRotationResponse['rotationStatus'],
    lastRotationMessage: row.lastRotationMessage,
    lastRotationAttemptedAt: iso(row.lastRotationAttemptedAt),
    lastRotatedAt: iso(row.lastRotatedAt),
    nextRotationAt: iso(row.nextRotationAt),
    isLastRotationManual: row.isLastRotationManual,
    consumerWaitMinutes: row.consumerWaitMinutes,
    waitingFor: (row.waitingFor as string[] | null) ?? [],
    waitingSince: iso(row.waitingSince),
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}

/** What an audit entry says about a rotation: where it writes and which keys, never a value. */
export function rotationAuditMetadata(row: Pick<RotationRow, 'id' | 'type' | 'name' | 'secretPath' | 'secretsMapping'> & { environmentSlug?: string }) {
  return { rotationId: row.id, type: row.type, name: row.name, environment: row.environmentSlug, secretPath: row.secretPath, secretsMapping: row.secretsMapping };
}
