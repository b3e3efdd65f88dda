import type { Keyring } from '../crypto/keyring.ts';
import type { Executor } from '../db/database.ts';
import { listSealedAuditLogStreams, setSealedAuditLogStream } from './audit-stream-store.ts';

/** A header sent with every delivery (e.g. a receiver's own `authorization`), as Infisical's streams take them. */
export interface StreamHeader {
  key: string;
  value: string;
}

/** The associated data binding a stream's sealed fields to its organization: copied into another row, they fail to open. */
function context(orgId: string, field: 'signing-key' | 'headers'): string {
  return `coffer:audit-log-stream:${orgId}:${field}`;
}

export function sealStreamKey(keyring: Keyring, orgId: string, secretKey: string): Buffer {
  return keyring.sealWithRootKey(secretKey, context(orgId, 'signing-key'));
}

export function openStreamKey(keyring: Keyring, orgId: string, sealed: Buffer): string {
  return keyring.openWithRootKey(sealed, context(orgId, 'signing-key'));
}

export function sealStreamHeaders(keyring: Keyring, orgId: string, headers: StreamHeader[]): Buffer {
  return keyring.sealWithRootKey(JSON.stringify(headers), context(orgId, 'headers'));
}

export function openStreamHeaders(keyring: Keyring, orgId: string, sealed: Buffer): StreamHeader[] {
  return JSON.parse(keyring.openWithRootKey(sealed, context(orgId, 'headers'))) as StreamHeader[];
}

/** Root key rotation, inside its transaction: every stream's signing key and headers opened with `current`, sealed with `next`. */
export async function resealAuditLogStreams(db: Executor, current: Keyring, next: Keyring): Promise<number> {
  const rows = await listSealedAuditLogStreams(db);
  for (const row of rows) {
    await setSealedAuditLogStream(db, row.id, {
      encryptedSecretKey: sealStreamKey(next, row.orgId, openStreamKey(current, row.orgId, row.encryptedSecretKey)),
      encryptedHeaders: sealStreamHeaders(next, row.orgId, openStreamHeaders(current, row.orgId, row.encryptedHeaders)),
    });
  }
  return rows.length;
}
