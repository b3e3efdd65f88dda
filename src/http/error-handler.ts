import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { hasZodFastifySchemaValidationErrors, isResponseSerializationError } from 'fastify-type-provider-zod';
import { translateDatabaseError } from '../db/errors.ts';
import { AppError, ServiceUnavailableError, TooManyRequestsError } from '../errors.ts';

interface ErrorBody {
  statusCode: number;
  message: string;
  error: string;
  reqId: string;
  details?: unknown;
}

function send(reply: FastifyReply, body: Omit<ErrorBody, 'reqId'>) {
  return reply.status(body.statusCode).send({ ...body, reqId: String(reply.request.id) });
}

const STATUS_NAMES: Record<number, string> = {
  400: 'BadRequest',
  404: 'NotFound',
  405: 'MethodNotAllowed',
  406: 'NotAcceptable',
  413: 'PayloadTooLarge',
  415: 'UnsupportedMediaType',
  429: 'RateLimitExceeded',
};

/** Every error leaves as `{statusCode, message, error, reqId}`; only our own bugs become 500s. */
export function registerErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((error: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
    if (hasZodFastifySchemaValidationErrors(error)) {
      const issues = error.validation.map((issue) => ({
        in: error.validationContext,
        path: issue.instancePath,
        message: issue.message,
      }));
      return send(reply, {
        statusCode: 422,
        error: 'ValidationFailure',
        message: issues.map((issue) => `${issue.in}${issue.path.replaceAll('/', '.')}: ${issue.message}`).join('; '),
        details: issues,
      });
    }
    const known = translateDatabaseError(error);
    if (known) {
      if (known instanceof ServiceUnavailableError) {
        reply.header('retry-after', String(known.retryAfterSeconds));
        request.log.warn({ err: error }, 'database unavailable');
      } else if (known instanceof TooManyRequestsError) {
        reply.header('retry-after', String(known.retryAfterSeconds));
      } else if (!(error instanceof AppError)) {
        request.log.info({ err: error }, 'database refused the request');
      }
      const body = { statusCode: known.statusCode, error: known.error, message: known.message };
      return send(reply, known.details === undefined ? body : { ...body, details: known.details });
    }
    if (!isResponseSerializationError(error) && error.statusCode && error.statusCode >= 400 && error.statusCode < 500) {
      return send(reply, {
        statusCode: error.statusCode,
        error: STATUS_NAMES[error.statusCode] ?? 'BadRequest',
        message: error.message,
      });
    }
    request.log.error({ err: error }, 'request failed');
    return send(reply, { statusCode: 500, error: 'InternalServerError', message: 'Something went wrong' });
  });

  app.setNotFoundHandler((request, reply) =>
    send(reply, { statusCode: 404, error: 'NotFound', message: `Route ${request.method} ${request.url.split('?')[0]} not found` }),
  );
}
