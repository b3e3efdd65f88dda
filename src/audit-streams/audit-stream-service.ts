import { randomBytes } from 'node:crypto';
import type { Actor } from '../actor/actor.ts';
import type { AuditLogStream } from '../db/schema.ts';
import { BadRequestError, NotFoundError } from '../errors.ts';
import { receiverUrl } from '../outbound/receiver-url.ts';
import type { Action } from '../permissions/permission-service.ts';
import type { ServiceDeps } from '../services/deps.ts';
import type { WriteContext } from '../services/unit-of-work.ts';
import { sealStreamHeaders, sealStreamKey, type StreamHeader } from './audit-stream-cipher.ts';
import { type AuditLogStreamView, toAuditLogStreamView } from './audit-stream-schema.ts';
import {
  countAuditLogStreams,
  deleteAuditLogStream,
  findAuditLogStream,
  findStreamStart,
  insertAuditLogStream,
  listAuditLogStreams,
  updateAuditLogStream,
} from './audit-stream-store.ts';

/** At most this many streams per organization: each is one more reader of the audit log and one more receiver called. */
export const MAX_STREAMS_PER_ORG = 10;
/** At most this many headers per stream. */
export const MAX_STREAM_HEADERS = 10;
/** Headers the delivery itself sets: a stream may not replace them. */
const RESERVED_HEADERS = new Set(['content-type', 'content-length', 'host', 'connection', 'transfer-encoding', 'x-coffer-signature', 'x-coffer-audit-log-stream-id']);
const HEADER_NAME = /^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/;
const HEADER_VALUE = /^[\t\x20-\x7e\x80-\uffff]*$/;

export interface AuditLogStreamInput {
  url: string;
  headers?: StreamHeader[];
  signingKey?: string;
}

/**
 * Audit log streams: an organization admin names HTTP receivers that get every audit entry of the organization
 * committed from the stream's creation on, delivered by AuditStreamDispatcher.
 */
export class AuditLogStreamService {
  readonly #deps: ServiceDeps;

  constructor(deps: ServiceDeps) {
    this.#deps = deps;
  }

  /** Creates a stream; answers its signing key once (generated when not given). */
  async create(actor: Actor, input: AuditLogStreamInput): Promise<{ auditLogStream: AuditLogStreamView; signingKey: string }> {
    const url = receiverUrl(input.url, 'url', 'InvalidStreamUrl');
    const headers = checkedHeaders(input.headers ?? []);
    return this.#deps.unitOfWork.write(actor, async (tx) => {
      await tx.authorizeOrg({ action: 'create', subject: 'audit-log-streams' });
      if ((await countAuditLogStreams(tx.db, actor.orgId)) >= MAX_STREAMS_PER_ORG) {
        throw new BadRequestError(`An organization has at most ${MAX_STREAMS_PER_ORG} audit log streams`, 'TooManyAuditLogStreams');
      }
      const signingKey = input.signingKey ?? randomBytes(32).toString('hex');
      const { keyring } = this.#deps;
      const stream = await insertAuditLogStream(
        tx.db,
        {
          orgId: actor.orgId,
          url,
          encryptedSecretKey: sealStreamKey(keyring, actor.orgId, signingKey),
          encryptedHeaders: sealStreamHeaders(keyring, actor.orgId, headers),
          headerKeys: headers.map((header) => header.key),
        },
        await findStreamStart(tx.db),
      );
      tx.audit({ orgId: actor.orgId, type: 'create-audit-log-stream', metadata: streamAudit(stream) });
      return { auditLogStream: toAuditLogStreamView(stream), signingKey };
    });
  }

  async list(actor: Actor): Promise<AuditLogStreamView[]> {
    await this.#deps.permissions.assertOrg({ actor, orgId: actor.orgId, action: 'read', subject: 'audit-log-streams' });
    return (await listAuditLogStreams(this.#deps.db, actor.orgId)).map(toAuditLogStreamView);
  }

  async get(actor: Actor, streamId: string): Promise<AuditLogStreamView> {
    await this.#deps.permissions.assertOrg({ actor, orgId: actor.orgId, action: 'read', subject: 'audit-log-streams' });
    return toAuditLogStreamView(await requireStream(this.#deps.db, actor, streamId));
  }

  /**
   * Changes the receiver's URL or headers; the cursor stays, so the new receiver gets what the old one had not
   * acknowledged. A new URL of a stream with headers needs its headers in the same request (`[]` for none): they are
   * credentials for the old receiver, never sent to another one unless the caller says so.
   */
  async update(actor: Actor, streamId: string, input: Partial<Omit<AuditLogStreamInput, 'signingKey'>>): Promise<AuditLogStreamView> {
    const url = input.url === undefined ? undefined : receiverUrl(input.url, 'url', 'InvalidStreamUrl');
    const headers = input.headers === undefined ? undefined : checkedHeaders(input.headers);
    return this.#onStream(actor, streamId, 'edit', async (tx, stream) => {
      const urlChanged = url !== undefined && url !== stream.url;
      if (urlChanged && headers === undefined && stream.headerKeys.length > 0) {
        throw new BadRequestError(
          'A new url needs the headers to send it in the same request (headers: [] for none): the stored ones are for the old receiver',
          'HeadersRequiredForNewUrl',
        );
      }
      const updated = await updateAuditLogStream(tx.db, stream.id, {
        ...(url === undefined ? {} : { url }),
        ...(headers === undefined
          ? {}
          : { encryptedHeaders: sealStreamHeaders(this.#deps.keyring, actor.orgId, headers), headerKeys: headers.map((header) => header.key) }),
        // a new receiver or new credentials for it: try at once
        consecutiveFailures: 0,
        nextAttemptAt: new Date(),
      });
      if (!updated) throw new NotFoundError(`Audit log stream with ID '${streamId}' not found`);
      tx.audit({ orgId: actor.orgId, type: 'update-audit-log-stream', metadata: { ...streamAudit(updated), urlChanged } });
      return toAuditLogStreamView(updated);
    });
  }

  async delete(actor: Actor, streamId: string): Promise<AuditLogStreamView> {
    return this.#onStream(actor, streamId, 'delete', async (tx, stream) => {
      await deleteAuditLogStream(tx.db, stream.id);
      tx.audit({ orgId: actor.orgId, type: 'delete-audit-log-stream', metadata: streamAudit(stream) });
      return toAuditLogStreamView(stream);
    });
  }

  #onStream<T>(actor: Actor, streamId: string, action: Exclude<Action, 'read'>, work: (tx: WriteContext, stream: AuditLogStream) => Promise<T>) {
    return this.#deps.unitOfWork.write(actor, async (tx) => {
      await tx.authorizeOrg({ action, subject: 'audit-log-streams' });
      return work(tx, await requireStream(tx.db, actor, streamId));
    });
  }
}

/** A stream of the caller's organization; another organization's answers as an unknown id does. */
async function requireStream(db: ServiceDeps['db'], actor: Actor, streamId: string): Promise<AuditLogStream> {
  const stream = await findAuditLogStream(db, actor.orgId, streamId);
  if (!stream) throw new NotFoundError(`Audit log stream with ID '${streamId}' not found`);
  return stream;
}

function checkedHeaders(headers: StreamHeader[]): StreamHeader[] {
  if (headers.length > MAX_STREAM_HEADERS) throw new BadRequestError(`A stream sends at most ${MAX_STREAM_HEADERS} headers`, 'InvalidStreamHeaders');
  const seen = new Set<string>();
  for (const { key, value } of headers) {
    const name = key.toLowerCase();
    if (!HEADER_NAME.test(key)) throw new BadRequestError("A header name must be an HTTP token (letters, digits and !#$%&'*+.^_`|~-)", 'InvalidStreamHeaders');
    if (!HEADER_VALUE.test(value)) throw new BadRequestError(`The value of header '${key}' must be one line of text`, 'InvalidStreamHeaders');
    if (RESERVED_HEADERS.has(name)) throw new BadRequestError(`Header '${key}' is set by every delivery and cannot be replaced`, 'InvalidStreamHeaders');
    if (seen.has(name)) throw new BadRequestError(`Header '${key}' is given twice`, 'InvalidStreamHeaders');
    seen.add(name);
  }
  return headers;
}

/** Names and ids only: the URL may name a receiver's tenant, header values are credentials. */
function streamAudit(stream: AuditLogStream) {
  return { auditLogStreamId: stream.id, headerKeys: stream.headerKeys };
}
