import type { ErrorStatus } from './operation-doc.ts';

/** The one error body of every failure: the `ErrorResponse` component of the OpenAPI document. */
export const errorResponseSchema = {
  type: 'object',
  description: 'Every error answer has this body.',
  required: ['statusCode', 'message', 'error', 'code', 'reqId'],
  properties: {
    statusCode: { type: 'integer', description: 'The HTTP status code again.', examples: [404] },
    message: { type: 'string', description: 'What went wrong, for people: names the field, resource or rule.', examples: ['Project not found'] },
    error: {
      type: 'string',
      description:
        "The name Infisical answers for this kind of error, one per status: `BadRequest` (400), `UnauthorizedError` (401), `ForbiddenError`, `PermissionDenied`, `TokenError` or `PermissionBoundaryError` (403), `NotFound` (404), `Conflict` (409), `ValidationFailure` (422), `RateLimitExceeded` (429), `ServiceUnavailable` (503). Infisical's clients branch on it.",
      examples: ['BadRequest'],
    },
    code: {
      type: 'string',
      description:
        "Coffer's specific name for the error, for programs that need more than `error`: `SecretExists`, `DuplicateEnvironmentSlug`, `InvalidPath`, `PrivilegeEscalation`, `ListingTooLarge`, `GrantMissing` … Equal to `error` when there is none more specific.",
      examples: ['DuplicateEnvironmentSlug'],
    },
    reqId: {
      type: 'string',
      description: "The request's id, also in the `x-request-id` header and in the server's log line for it.",
      examples: ['req-0c4b6a7e-1f2d-4e3a-9b8c-5d6e7f8a9b0c'],
    },
    details: {
      description: 'For 422 ValidationFailure: each failed field, `{in, path, message}`.',
      type: 'array',
      items: {
        type: 'object',
        properties: { in: { type: 'string', examples: ['body'] }, path: { type: 'string', examples: ['/environment'] }, message: { type: 'string', examples: ['Too small: expected string to have >=1 characters'] } },
      },
    },
  },
} as const;

interface ErrorDoc {
  description: string;
  error: string;
  code: string;
  message: string;
}

const ERRORS: Record<ErrorStatus, ErrorDoc> = {
  400: {
    description:
      'Malformed JSON, or the request breaks a rule: a duplicate slug or name, an invalid folder name, a bootstrap of an instance already set up. `error` is always `BadRequest`; `code` names the rule.',
    error: 'BadRequest',
    code: 'DuplicateEnvironmentSlug',
    message: "Environment with slug 'dev' already exists in this project",
  },
  401: {
    description: 'No access token, or a revoked, used-up or expired one; on a login, wrong credentials.',
    error: 'UnauthorizedError',
    code: 'UnauthorizedError',
    message: 'Token missing',
  },
  403: {
    description:
      'A malformed or forged token (`TokenError`), or a caller without the permission this operation needs (`PermissionDenied`; `PermissionBoundaryError` with code `PrivilegeEscalation` for a grant above your own). A project you are not a member of answers 404, as one that does not exist.',
    error: 'PermissionDenied',
    code: 'PermissionDenied',
    message: 'You are not allowed to create on secrets',
  },
  404: {
    description:
      'An id, slug, name or path in the request names nothing that exists, or nothing the caller may see: a project of another organization, or one the caller is not a member of, answers exactly as one that does not exist. Non-UUID ids are 404 too.',
    error: 'NotFound',
    code: 'NotFound',
    message: 'Project not found',
  },
  409: {
    description: 'The change lost a race with another one that made it impossible (the same name created at the same moment, a deleted parent).',
    error: 'Conflict',
    code: 'Conflict',
    message: 'The folder was changed by another request; try again',
  },
  422: {
    description: 'A field is missing, of the wrong type or out of range; `details` lists every failed field.',
    error: 'ValidationFailure',
    code: 'ValidationFailure',
    message: 'body.environment: Too small: expected string to have >=1 characters',
  },
  429: {
    description: 'Too many attempts or open streams; `Retry-After` says when to try again where it applies.',
    error: 'RateLimitExceeded',
    code: 'RateLimitExceeded',
    message: 'Too many event streams open for this caller and project',
  },
};

export interface OperationShape {
  isPublic: boolean;
  hasParameters: boolean;
  hasBody: boolean;
  /** A path parameter, or an input naming a project or environment that may not exist. */
  namesResource: boolean;
  declared: ErrorStatus[];
}

/** The statuses an operation documents: those its shape implies, and those its route declares. */
export function errorStatusesOf(shape: OperationShape): ErrorStatus[] {
  const statuses = new Set<ErrorStatus>(shape.declared);
  if (!shape.isPublic) {
    statuses.add(401);
    statuses.add(403);
  }
  if (shape.hasBody) statuses.add(400);
  if (shape.hasBody || shape.hasParameters) statuses.add(422);
  if (shape.namesResource) statuses.add(404);
  return [...statuses].sort();
}

export function errorResponse(status: ErrorStatus) {
  const { description, error, code, message } = ERRORS[status];
  return {
    description,
    content: {
      'application/json': {
        schema: { $ref: '#/components/schemas/ErrorResponse' },
        example: { statusCode: status, message, error, code, reqId: 'req-0c4b6a7e-1f2d-4e3a-9b8c-5d6e7f8a9b0c' },
      },
    },
  };
}
