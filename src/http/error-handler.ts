import { randomUUID } from 'node:crypto';
import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { hasZodFastifySchemaValidationErrors, isResponseSerializationError } from 'fastify-type-provider-zod';
import { translateDatabaseError } from '../services/database-errors.ts';
import { AppError, ServiceUnavailableError, TooManyRequestsError, wireErrorName } from '../errors.ts';
import { noteErrorCode } from './request-log.ts';

/** `error` is Infisical's name for the kind of failure, `code` Coffer's specific one (errors.ts). */
interface ErrorBody {
  statusCode: number;
  message: string;
  error: string;
  code: string;
  reqId: string;
  details?: unknown;
}

/** The body of a failure with this status and specific code (the code is the `error` name when there is none more specific). */
function errorBody(statusCode: number, message: string, code = wireErrorName(statusCode, '')): Omit<ErrorBody, 'reqId'> {
  return { statusCode, message, error: wireErrorName(statusCode, code), code };
}

function send(reply: FastifyReply, body: Omit<ErrorBody, 'reqId'>) {
  noteErrorCode(reply.request, body.code);
  return reply.status(body.statusCode).send({ ...body, reqId: String(reply.request.id) });
}

/** The largest response body sent. */
export const MAX_RESPONSE_BYTES = 48 * 1024 * 1024;

/** Request ids: every answer, Fastify's own rejections and the HTTP parser's included, carries one. */
export const newRequestId = () => `req-${randomUUID()}`;

/**
 * What Fastify's router rejects before any route runs (a malformed
 * percent-encoding, a path parameter past maxParamLength): the usual body.
 */
export function frameworkErrors(error: FastifyError, _request: FastifyRequest, reply: FastifyReply) {
  const statusCode = error.code === 'FST_ERR_MAX_PARAM_LENGTH' ? 414 : 400;
  const message = statusCode === 414 ? 'A path parameter is longer than allowed' : 'The URL is malformed (invalid percent-encoding)';
  return send(reply, errorBody(statusCode, message));
}

/**
 * What Node's HTTP parser rejects before Fastify sees a request (headers past
 * 16 KiB, a malformed request line, a request timeout): the usual body, then
 * the connection is closed, as Node itself does.
 */
export function clientErrorHandler(error: NodeJS.ErrnoException, socket: Socket): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const statusCode = error.code === 'HPE_HEADER_OVERFLOW' ? 431 : error.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 408 : 400;
  const message =
    statusCode === 431 ? 'The request headers are larger than allowed (16 KiB)' : statusCode === 408 ? 'The request took too long to arrive' : 'The request is malformed';
  const body = JSON.stringify({ ...errorBody(statusCode, message), reqId: newRequestId() });
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 ${statusCode} ${STATUS_CODES[statusCode]}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy(error);
}

/**
 * While the database is away every request fails the same way: one warning
 * per interval (with how many more failed since), the rest at debug level.
 */
class OutageLog {
  #lastWarnedAt = 0;
  #since = 0;

  report(request: FastifyRequest, error: unknown): void {
    const now = Date.now();
    if (now - this.#lastWarnedAt < 5_000) {
      this.#since++;
      request.log.debug({ err: error }, 'database unavailable');
      return;
    }
    request.log.warn({ err: error, alsoUnavailableSinceLastWarning: this.#since }, 'database unavailable; answering 503');
    this.#lastWarnedAt = now;
    this.#since = 0;
  }
}

/** Every error leaves as `{statusCode, message, error, code, reqId}`; only our own bugs become 500s. */
export function registerErrorHandling(app: FastifyInstance, notFoundFallback?: (request: FastifyRequest, reply: FastifyReply) => unknown): void {
  const outageLog = new OutageLog();
  app.setErrorHandler((error: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
    if (hasZodFastifySchemaValidationErrors(error)) {
      const issues = error.validation.map((issue) => ({
        in: error.validationContext,
        path: issue.instancePath,
        message: issue.message,
      }));
      const message = issues.map((issue) => `${issue.in}${issue.path.replaceAll('/', '.')}: ${issue.message}`).join('; ');
      return send(reply, { ...errorBody(422, message), details: issues });
    }
    const known = translateDatabaseError(error);
    if (known) {
      if (known instanceof ServiceUnavailableError) {
        reply.header('retry-after', String(known.retryAfterSeconds));
        outageLog.report(request, error);
      } else if (known instanceof TooManyRequestsError) {
        reply.header('retry-after', String(known.retryAfterSeconds));
      } else if (!(error instanceof AppError)) {
        request.log.info({ err: error }, 'database refused the request');
      }
      const body = errorBody(known.statusCode, known.message, known.code);
      return send(reply, known.details === undefined ? body : { ...body, details: known.details });
    }
    if (!isResponseSerializationError(error) && error.statusCode && error.statusCode >= 400 && error.statusCode < 500) {
      return send(reply, errorBody(error.statusCode, error.message));
    }
    request.log.error({ err: error }, 'request failed');
    return send(reply, errorBody(500, 'Something went wrong'));
  });

  // The last guard on one response's size; listings refuse earlier, before decrypting (MAX_LISTING_BYTES).
  app.addHook('onSend', async (request, reply, payload) => {
    const size = typeof payload === 'string' ? Buffer.byteLength(payload) : Buffer.isBuffer(payload) ? payload.byteLength : 0;
    if (size <= MAX_RESPONSE_BYTES) return payload;
    request.log.warn({ size }, 'response over the size limit refused');
    reply.code(422).type('application/json; charset=utf-8');
    const message = `The response would be larger than ${MAX_RESPONSE_BYTES / 1024 / 1024} MiB; ask for less at once`;
    return JSON.stringify({ ...errorBody(422, message, 'ResponseTooLarge'), reqId: String(request.id) });
  });

  app.setNotFoundHandler((request, reply) => {
    // the console's page for a browser opening one of its paths (never an API path): its router shows the screen
    const answered = notFoundFallback?.(request, reply);
    if (answered !== undefined) return answered;
    return send(reply, errorBody(404, `Route ${request.method} ${request.url.split('?')[0]} not found`));
  });
}
