import { z } from 'zod';
import type { Services } from '../../app/container.ts';
import { flag, id, required } from '../../validation/input.ts';
import { loginTokenHook, requestOrigin } from '../authenticate.ts';
import { changes, describeRoute, orgPermission, reads } from '../docs/operation-doc.ts';
import type { ZodApp } from '../zod-app.ts';

const mfaTags = ['Second factor'];
const sessionTags = ['Sessions'];
const loginTokenRule = 'a user: a login token from `POST /api/v3/auth/login` or a user access token (never an identity).';
const messageSchema = z.object({ message: z.string().describe('What was done.') });

/** TOTP enrolment: a login token may call these, so that a user whose organization requires MFA can enrol before choosing it. */
export function mfaEnrolmentRoutes(app: ZodApp, { mfa, auth }: Services): void {
  const onRequest = loginTokenHook(auth);

  app.get(
    '/api/v1/auth/mfa',
    {
      onRequest,
      schema: {
        tags: mfaTags,
        ...describeRoute({
          summary: "The user's second factor",
          description: 'Whether TOTP is enrolled and how many recovery codes are left.',
          permission: loginTokenRule,
          effects: reads(),
          errors: [401, 403],
        }),
        response: { 200: z.object({ totpEnabled: z.boolean(), recoveryCodesLeft: z.number() }) },
      },
    },
    async (request) => mfa.status(request.loginUserId),
  );

  app.post(
    '/api/v1/auth/mfa/totp',
    {
      onRequest,
      schema: {
        tags: mfaTags,
        ...describeRoute({
          summary: 'Start TOTP enrolment',
          description:
            'A new TOTP secret (RFC 6238: SHA-1, 6 digits, 30 s), shown only here, as base32 and as an `otpauth://` URL for an authenticator app. It counts once confirmed. An enrolled user answers 409 `MfaAlreadyEnrolled` (an org admin resets it).',
          permission: loginTokenRule,
          effects: 'Stores the secret, sealed under the root key, unconfirmed (no audit entry until it is confirmed).',
          errors: [401, 403, 409],
        }),
        response: { 200: z.object({ secret: z.string().describe('The secret, base32.'), otpauthUrl: z.string().describe('The same as an `otpauth://totp/…` URL.') }) },
      },
    },
    async (request) => mfa.enrol(request.loginUserId, requestOrigin(request)),
  );

  app.post(
    '/api/v1/auth/mfa/totp/confirm',
    {
      onRequest,
      schema: {
        tags: mfaTags,
        ...describeRoute({
          summary: 'Confirm TOTP enrolment',
          description:
            'Confirms the new secret with a current code (400 `InvalidMfaCode` otherwise) and answers ten recovery codes, shown only here, each good for one sign-in in place of a code. From then on password sign-in needs `totpCode` or `recoveryCode`.',
          permission: loginTokenRule,
          effects: changes('Turns TOTP on and stores the recovery codes as digests.', 'enrol-mfa-totp'),
          errors: [400, 401, 403, 409],
        }),
        body: z.object({
          code: required(16)
            .describe('A current code from the authenticator app.')
            .meta({ examples: ['492039'] }),
        }),
        response: { 200: messageSchema.extend({ recoveryCodes: z.array(z.string()).describe('Ten single-use recovery codes: shown only now.') }) },
      },
    },
    async (request) => mfa.confirm(request.loginUserId, request.body.code, requestOrigin(request)),
  );
}

const sessionSchema = z.object({
  id: z.string(),
  organizationId: z.string(),
  authMethod: z.string().describe('`email` (password) or `oidc`.'),
  userAgent: z.string().nullable().describe('The User-Agent it was opened with.'),
  ip: z.string().nullable().describe('The address it was last used from.'),
  createdAt: z.string(),
  lastUsedAt: z.string().describe('Its last use, to the minute.'),
  expiresAt: z.string(),
  current: z.boolean().describe('The session this request carries.'),
});
const userOnly = 'a user access token (an identity answers 403 `NotAUser`).';

/** A user's own sessions, and an admin's hand on a member's sessions and second factor. */
export function sessionRoutes(app: ZodApp, { sessions, mfa }: Services): void {
  app.get(
    '/api/v1/auth/sessions',
    {
      schema: {
        tags: sessionTags,
        ...describeRoute({
          summary: 'List my sessions',
          description: "The caller's live sessions in every organization, newest first.",
          permission: userOnly,
          effects: reads(),
        }),
        response: { 200: z.object({ sessions: z.array(sessionSchema) }) },
      },
    },
    async (request) => sessions.list(request.actor),
  );

  app.delete(
    '/api/v1/auth/sessions/:sessionId',
    {
      schema: {
        tags: sessionTags,
        ...describeRoute({
          summary: 'Revoke one of my sessions',
          description: "Ends one of the caller's sessions: its token is refused by the next request, on every replica. Another user's session answers 404.",
          permission: userOnly,
          effects: changes('Revokes the session.', 'revoke-user-session'),
          errors: [404],
        }),
        params: z.object({ sessionId: id().describe("The session's id.") }),
        response: { 200: messageSchema },
      },
    },
    async (request) => sessions.revoke(request.actor, request.params.sessionId),
  );

  app.delete(
    '/api/v1/auth/sessions',
    {
      schema: {
        tags: sessionTags,
        ...describeRoute({
          summary: 'Revoke all my sessions',
          description: 'Ends every session of the caller (with `keepCurrent=true`, all but the one this request carries).',
          permission: userOnly,
          effects: changes('Revokes the sessions.', 'revoke-user-session'),
        }),
        querystring: z.object({ keepCurrent: flag(false).describe('Keep the session this request carries.') }),
        response: { 200: messageSchema.extend({ revoked: z.number().describe('How many were revoked.') }) },
      },
    },
    async (request) => sessions.revokeAll(request.actor, request.query.keepCurrent),
  );

  const memberParams = z.object({ organizationId: id().describe("The organization's id (the caller's)."), userId: id().describe("The user's id.") });

  app.delete(
    '/api/v1/organization/:organizationId/users/:userId/sessions',
    {
      schema: {
        tags: sessionTags,
        ...describeRoute({
          summary: "Revoke a member's sessions",
          description: "Ends every session the user has in this organization, at once on every replica. A member above the caller's own role answers 403.",
          permission: orgPermission('edit', 'member'),
          effects: changes('Revokes the sessions.', 'revoke-user-session'),
          errors: [404],
        }),
        params: memberParams,
        response: { 200: messageSchema.extend({ revoked: z.number().describe('How many were revoked.') }) },
      },
    },
    async (request) => sessions.revokeMember(request.actor, request.params.organizationId, request.params.userId),
  );

  app.delete(
    '/api/v1/organization/:organizationId/users/:userId/mfa',
    {
      schema: {
        tags: mfaTags,
        ...describeRoute({
          summary: "Reset a member's second factor",
          description: "Removes the user's TOTP enrolment and recovery codes (a lost device); they enrol again. A member above the caller's own role answers 403.",
          permission: orgPermission('edit', 'member'),
          effects: changes('Removes the enrolment.', 'reset-user-mfa'),
          errors: [404],
        }),
        params: memberParams,
        response: { 200: messageSchema.extend({ reset: z.boolean().describe('Whether an enrolment was removed.') }) },
      },
    },
    async (request) => mfa.reset(request.actor, request.params.organizationId, request.params.userId),
  );
}
