/**
 * Errors a service may throw; the HTTP layer turns them into
 * `{statusCode, message, error, reqId}` bodies. Messages must never carry a
 * secret value, a client secret or a token.
 */
export class AppError extends Error {
  readonly statusCode: number;
  readonly error: string;
  readonly details?: unknown;

  constructor(statusCode: number, error: string, message: string, details?: unknown) {
    super(message);
    this.statusCode = statusCode;
    this.error = error;
    this.details = details;
  }
}

export class BadRequestError extends AppError {
  constructor(message = 'The request is invalid', error = 'BadRequest') {
    super(400, error, message);
  }
}

export class UnauthorizedError extends AppError {
  constructor(message = 'You are not allowed to access this resource', error = 'UnauthorizedError') {
    super(401, error, message);
  }
}

export class ForbiddenError extends AppError {
  constructor(message = 'You are not allowed to access this resource', error = 'ForbiddenError', details?: unknown) {
    super(403, error, message, details);
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
  constructor(message = 'The requested entity is not found', error = 'NotFound') {
    super(404, error, message);
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
  constructor(message: string, error = 'Conflict') {
    super(409, error, message);
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
