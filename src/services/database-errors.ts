import { NoResultError } from 'kysely';
import { isOutdatedPreparedStatement } from '../db/prepared-statements.ts';
import { AppError, ConflictError, NotFoundError, ServiceUnavailableError } from '../errors.ts';

/** The unique constraint a failed statement violated (its name), or undefined for any other failure. */
export function violatedConstraint(error: unknown): string | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const { code, constraint } = error as { code?: unknown; constraint?: unknown };
  return code === '23505' && typeof constraint === 'string' ? constraint : undefined;
}

/** Socket-level failures: the server is not there, or the connection to it broke. */
const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'ECONNABORTED']);

/** What node-postgres and Kysely say when a connection could not be had or was lost. */
const CONNECTION_MESSAGES = [
  'Connection terminated',
  'timeout exceeded when trying to connect',
  'Client has encountered a connection error and is not queryable',
  'Client was closed and is not queryable',
  'Cannot use a pool after calling end on the pool',
  'driver has already been destroyed',
  'PGlite is closed',
];

/**
 * SQLSTATEs that mean "the database cannot serve this now": connection
 * exceptions (08), shutdown and start-up (57P01-57P03), out of resources (53),
 * and a statement cancelled by statement_timeout (57014).
 */
function isUnavailableState(code: string): boolean {
  return code.startsWith('08') || code.startsWith('53') || ['57P01', '57P02', '57P03', '57014'].includes(code);
}

interface DriverError {
  code?: unknown;
  message?: unknown;
  detail?: unknown;
}

/**
 * The one mapping from a database failure to what the client is told, applied
 * by the unit of work to every write (after the write's own names for its
 * unique constraints) and by the HTTP error handler to what a read lets
 * through. The database unreachable or too slow → 503 (with Retry-After); a
 * concurrent write that won the race → 409; a row or parent that vanished
 * meanwhile → 404; a value PostgreSQL cannot hold (NUL, out-of-range number, malformed
 * id) → 422; a prepared statement a migration outdated → 503. Anything else is not recognised (undefined): a bug, a 500.
 * Messages never quote the database's own text, which can carry values.
 */
export function translateDatabaseError(error: unknown): AppError | undefined {
  if (error instanceof AppError) return error;
  if (error instanceof NoResultError) return new NotFoundError('The resource was removed by a concurrent request');
  if (typeof error !== 'object' || error === null) return undefined;
  const { code, message, detail } = error as DriverError;
  const text = typeof message === 'string' ? message : '';
  if (typeof code === 'string' && NETWORK_CODES.has(code)) return unavailable();
  if (CONNECTION_MESSAGES.some((known) => text.includes(known))) return unavailable();
  if (typeof code !== 'string' || !/^[0-9A-Z]{5}$/.test(code)) return undefined;
  if (code === '57014') return unavailable('The database did not answer in time; try again later');
  // the connection that held the statement is dropped (postgres-pool.ts): the next try prepares it anew
  if (isOutdatedPreparedStatement(error)) return unavailable('The database schema changed during this request; try again');
  if (isUnavailableState(code)) return unavailable();
  if (code === '23505') return new ConflictError('A concurrent request created the same resource; nothing was written', 'Conflict');
  if (code === '23503') {
    if (typeof detail === 'string' && detail.includes('is still referenced')) {
      return new ConflictError('The resource is still in use by another one; nothing was changed', 'Conflict');
    }
    return new NotFoundError('A resource this request refers to was removed by a concurrent request; nothing was written');
  }
  if (code === '40001' || code === '40P01') return new ConflictError('The request conflicted with a concurrent one; nothing was written, try again', 'Conflict');
  // Class 22, data exception: a value that no column of its type can hold.
  if (code.startsWith('22')) {
    return new AppError(422, 'ValidationFailure', 'A value in the request cannot be stored: out of range, malformed, or holding a NUL character');
  }
  return undefined;
}

function unavailable(message = 'The database is unavailable; try again later'): ServiceUnavailableError {
  return new ServiceUnavailableError(message);
}
