import pino, { type Logger, type LoggerOptions, stdSerializers } from 'pino';
import pretty from 'pino-pretty';

/**
 * Paths pino censors wherever they appear in a log object. Request bodies and
 * responses are never logged; these guard the places a header or a value
 * could still slip in.
 */
export const redactedPaths = [
  'req.headers.authorization',
  'req.headers.cookie',
  'req.headers["x-api-key"]',
  'res.headers["set-cookie"]',
  '*.authorization',
  '*.password',
  '*.token',
  '*.accessToken',
  '*.clientSecret',
  '*.inviteToken',
  '*.secretValue',
  '*.encryptionKey',
  '*.authSecret',
  '*.databaseUrl',
];

/** `auto`: readable lines when the output is a terminal, JSON (one object a line) otherwise. */
export type LogFormatSetting = 'auto' | 'json' | 'pretty';

/** Fields that the messages carrying them already show (a request's line, a migration's): left out of pretty lines. */
const SHOWN_IN_MESSAGE = ['method', 'url', 'route', 'statusCode', 'durationMs', 'migration', 'ms', 'count'];

export function loggerOptions(level: string): LoggerOptions {
  return {
    level,
    redact: { paths: redactedPaths, censor: '[redacted]' },
    serializers: {
      err: serializeError,
      req(request: { id: string; method: string; url: string; ip?: string }) {
        return { id: request.id, method: request.method, url: stripQuerySecrets(request.url), ip: request.ip };
      },
    },
  };
}

export function usesPrettyLogs(format: LogFormatSetting, fd: 1 | 2): boolean {
  if (format === 'auto') return (fd === 1 ? process.stdout : process.stderr).isTTY === true;
  return format === 'pretty';
}

/**
 * The process logger, writing synchronously to stdout (`serve`) or stderr
 * (one-shot commands, whose stdout stays parseable). Pretty lines are made in
 * this thread (no transport worker) so nothing is lost when the process exits.
 */
export function createLogger(settings: { level: string; format: LogFormatSetting }, fd: 1 | 2 = 1): Logger {
  if (!usesPrettyLogs(settings.format, fd)) return pino(loggerOptions(settings.level), pino.destination({ fd, sync: true }));
  const stream = pretty({
    destination: fd,
    sync: true,
    colorize: (fd === 1 ? process.stdout : process.stderr).isTTY === true,
    translateTime: 'SYS:HH:MM:ss.l',
    ignore: ['pid', 'hostname', ...SHOWN_IN_MESSAGE].join(','),
    singleLine: true,
  });
  return pino(loggerOptions(settings.level), stream);
}

/** Query strings may carry tokens (e.g. `?token=`); keep only parameter names. */
export function stripQuerySecrets(url: string): string {
  const mark = url.indexOf('?');
  if (mark < 0) return url;
  const names = new URLSearchParams(url.slice(mark + 1));
  const kept = [...names.keys()].map((name) => (/(token|secret|password|key)/i.test(name) ? `${name}=[redacted]` : `${name}=${names.get(name)}`));
  return `${url.slice(0, mark)}?${kept.join('&')}`;
}

/** Fields of a driver's error that can carry a statement's bind parameters or the values it was given. */
const VALUE_FIELDS = ['params', 'parameters', 'detail', 'where', 'hint', 'internalQuery', 'query', 'queryOptions', 'position', 'internalPosition'];
/** What a database error may say about itself in a log line: where it happened, never with what. */
const DATABASE_ERROR_FIELDS = ['type', 'code', 'severity', 'schema', 'table', 'column', 'dataType', 'constraint', 'routine'];

function isDatabaseError(error: Record<string, unknown>): boolean {
  return (typeof error.code === 'string' && /^[0-9A-Z]{5}$/.test(error.code)) || 'params' in error || 'parameters' in error;
}

/** PostgreSQL quotes the offending value in messages (`invalid input syntax for type integer: "…"`). */
function withoutQuotedValues(text: string): string {
  return text.replace(/"(?:[^"\\]|\\.)*"/g, '"…"');
}

/**
 * Errors as log fields: pino's standard form, except that a database error
 * keeps only where it happened (SQLSTATE, constraint, table, routine), its
 * message and stack with quoted values blanked, and never the statement's
 * bind parameters or detail; the same for each error in its `cause` chain.
 */
export function serializeError(error: unknown, depth = 0): unknown {
  if (!(error instanceof Error)) return error;
  const serialized = stdSerializers.err(error) as unknown as Record<string, unknown>;
  for (const field of VALUE_FIELDS) delete serialized[field];
  if (isDatabaseError(error as unknown as Record<string, unknown>)) {
    const kept: Record<string, unknown> = { message: withoutQuotedValues(error.message), stack: withoutQuotedValues(error.stack ?? '') };
    for (const field of DATABASE_ERROR_FIELDS) if (serialized[field] !== undefined) kept[field] = serialized[field];
    return kept;
  }
  if (error.cause !== undefined && depth < 5) {
    serialized.cause = serializeError(error.cause, depth + 1);
    // pino writes the causes' messages into this error's message and stack too
    if (causedByDatabase(error.cause, depth + 1)) {
      serialized.message = withoutQuotedValues(typeof serialized.message === 'string' ? serialized.message : '');
      serialized.stack = withoutQuotedValues(typeof serialized.stack === 'string' ? serialized.stack : '');
    }
  }
  return serialized;
}

function causedByDatabase(error: unknown, depth: number): boolean {
  if (!(error instanceof Error) || depth > 5) return false;
  return isDatabaseError(error as unknown as Record<string, unknown>) || causedByDatabase(error.cause, depth + 1);
}
