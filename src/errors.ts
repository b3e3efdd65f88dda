/**
 * Errors a service may throw; the HTTP layer turns them into
 * `{statusCode, message, error, code, reqId}` bodies. Messages must never carry a
 * secret value, a client secret or a token.
 *
 * Two names per error: `error` is the name Infisical answers for the same
 * kind of failure (clients branch on it: `BadRequest` for every 400,
 * `NotFound` for every 404...), `code` is Coffer's own, specific name
 * (`SecretExists`, `InvalidPath`, `GrantMissing`...). A constructor's `code`
 * argument is that specific name; without one the code is the `error` name.
 */
export class AppError extends Error {
  readonly statusCode: number;
  /** Infisical's name for this kind of failure (wireErrorName). */
  readonly error: string;
  /** Coffer's specific name for this failure: what programs branch on. */
  readonly code: string;
  readonly details?: unknown;

  constructor(statusCode: number, code: string, message: string, details?: unknown) {
    super(message);
    this.statusCode = statusCode;
    this.code = code;
    this.error = wireErrorName(statusCode, code);
    this.details = details;
  }
}

/** The `error` name of each status, as Infisical answers it (its error classes' default names). */
export const ERROR_NAMES: Readonly<Record<number, string>> = {
  400: 'BadRequest',
  401: 'UnauthorizedError',
  403: 'ForbiddenError',
  404: 'NotFound',
  405: 'MethodNotAllowed',
  406: 'NotAcceptable',
  408: 'RequestTimeout',
  409: 'Conflict',
  413: 'PayloadTooLarge',
  414: 'URITooLong',
  415: 'UnsupportedMediaType',
  422: 'ValidationFailure',
  429: 'RateLimitExceeded',
  431: 'RequestHeaderFieldsTooLarge',
  500: 'InternalServerError',
  503: 'ServiceUnavailable',
};

/**
 * 403 names Infisical answers besides its default: a permission check that
 * fails (`PermissionDenied`, with the rules in `details`), a token that does
 * not verify (`TokenError`), and a grant above the granter's own permissions
 * (`PermissionBoundaryError`, Coffer's `PrivilegeEscalation`).
 */
const FORBIDDEN_NAMES: Readonly<Record<string, string>> = {
  PermissionDenied: 'PermissionDenied',
  TokenError: 'TokenError',
  PrivilegeEscalation: 'PermissionBoundaryError',
};

/** The `error` of an answer with this status and specific code. */
export function wireErrorName(statusCode: number, code: string): string {
  if (statusCode === 403) return FORBIDDEN_NAMES[code] ?? ERROR_NAMES[403]!;
  return ERROR_NAMES[statusCode] ?? (statusCode >= 500 ? ERROR_NAMES[500]! : ERROR_NAMES[400]!);
}

export class BadRequestError extends AppError {
  constructor(message = 'The request is invalid', code = 'BadRequest') {
    super(400, code, message);
  }
}

export class UnauthorizedError extends AppError {
  constructor(message = 'You are not allowed to access this resource', code = 'UnauthorizedError') {
    super(401, code, message);
  }
}

export class ForbiddenError extends AppError {
  constructor(message = 'You are not allowed to access this resource', code = 'ForbiddenError', details?: unknown) {
    super(403, code, message, details);
  }
}

export class PermissionDeniedError extends ForbiddenError {
  constructor(action: string, subject: string) {
    super(`You are not allowed to ${action} on ${subject}`, 'PermissionDenied');
  }
}

export class TokenError extends ForbiddenError {
  constructor(message: string) {
    super(message, 'TokenError');
  }
}

export class NotFoundError extends AppError {
  constructor(message = 'The requested entity is not found', code = 'NotFound') {
    super(404, code, message);
  }
}

/**
 * A project that does not exist, and one the caller may not see (another
 * organization's, or one it is not a member of), answer this same 404: no
 * status, name or message tells them apart.
 */
export class ProjectNotFoundError extends NotFoundError {
  constructor() {
    super('Project not found', 'ProjectNotFound');
  }
}

/** 429 with a Retry-After header (seconds). */
export class TooManyRequestsError extends AppError {
  readonly retryAfterSeconds: number;

  constructor(message: string, retryAfterSeconds: number) {
    super(429, 'RateLimitExceeded', message);
    this.retryAfterSeconds = retryAfterSeconds;
  }
}

export class ConflictError extends AppError {
  constructor(message: string, code = 'Conflict') {
    super(409, code, message);
  }
}

export class RateLimitError extends AppError {
  constructor(message: string) {
    super(429, 'RateLimitExceeded', message);
  }
}

/** The database cannot be reached (or did not answer in time); the client should try again later. */
export class ServiceUnavailableError extends AppError {
  /** Seconds the client should wait before retrying (the Retry-After header). */
  readonly retryAfterSeconds: number;

  constructor(message: string, retryAfterSeconds = 5) {
    super(503, 'ServiceUnavailable', message);
    this.retryAfterSeconds = retryAfterSeconds;
  }
}
