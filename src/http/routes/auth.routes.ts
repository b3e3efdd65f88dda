import { z } from 'zod';
import type { Services } from '../../app/container.ts';
import { loginBody, tokenResponseSchema } from '../../universal-auth/ua-schema.ts';
import { publicUserSchema } from '../../users/user-schema.ts';
import type { ZodApp } from '../zod-app.ts';
import { loginTokenHook, requestOrigin } from '../authenticate.ts';
import { email, id, optional, password as passwordText, required, text } from '../../validation/input.ts';
import { changes, describeRoute, PUBLIC, reads } from '../docs/operation-doc.ts';

const tags = ['Authentication'];
const password = passwordText(8).describe('The password the user will log in with, at least 8 characters.');
const organizationId = id().describe("The organization's id.");
const throttled =
  'Failed attempts are counted per credential and source address together and per source address: an address past its limit, for this credential or for all, answers 429 `RateLimitExceeded` with `Retry-After` until its lockout ends, whatever it sends. The credential itself is never locked: an address that has not been failing is always checked (README, Login throttling).';

const userCredentials = {
  email: email().describe("The user's email."),
  password: passwordText(1).describe("The user's password."),
  totpCode: optional(required(16)).describe(
    'A current TOTP code, when the user has enrolled one (403 `MfaRequired` without it; a wrong or used code is a failed attempt, 401 `InvalidMfaCode`).',
  ),
  recoveryCode: optional(required(32)).describe('One of the recovery codes, in place of `totpCode`; each works once.'),
};
const loginTokenRule = 'a login token from `POST /api/v3/auth/login` (or a user access token).';

/** Routes that take credentials (or a login token) instead of an access token. */
export function publicAuthRoutes(app: ZodApp, { universalAuthLogin, userLogin, invites, auth }: Services): void {
  const onRequest = loginTokenHook(auth);
  app.post(
    '/api/v1/auth/universal-auth/login',
    {
      schema: {
        tags,
        ...describeRoute({
          summary: 'Log in with universal auth',
          description: `Exchanges a machine identity's client id and client secret for an access token (JSON or form body). The token lives as the identity's universal auth says (TTL, max TTL, uses, trusted IPs). A wrong, revoked, expired or used-up secret and an unknown client id all answer the same 401. ${throttled}`,
          permission: PUBLIC,
          effects: changes('Issues an access token and counts a use of the client secret.', 'login-identity-universal-auth'),
          errors: [401, 429],
        }),
        body: loginBody,
        response: { 200: tokenResponseSchema },
      },
    },
    async (request) => universalAuthLogin.login(request.body, requestOrigin(request)),
  );

  app.post(
    '/api/v1/auth/login',
    {
      schema: {
        tags,
        ...describeRoute({
          summary: 'Log in a user',
          description: `Exchanges a user's email and password for a 10-day access token in one of their organizations (the first they joined when \`organizationId\` is absent). Wrong credentials answer 401. ${throttled}`,
          permission: PUBLIC,
          effects: changes('Opens a session.', 'login-user'),
          errors: [401, 429],
        }),
        body: z.object({
          ...userCredentials,
          organizationId: optional(id()).describe('The organization to log in to; the first one the user joined when absent.'),
        }),
        response: {
          200: z.object({
            accessToken: z.string().describe('The access token: send it as `Authorization: Bearer <token>`.'),
            expiresIn: z.number().describe('Seconds until it expires.'),
            tokenType: z.literal('Bearer'),
            organizationId: z.string().describe('The organization it acts in.'),
          }),
        },
      },
    },
    async (request) => userLogin.login(request.body, requestOrigin(request)),
  );

  app.post(
    '/api/v3/auth/login',
    {
      schema: {
        tags,
        ...describeRoute({
          summary: 'Log in a user (two steps)',
          description: `Exchanges a user's email and password for a login token valid for 10 minutes that only lists the user's organizations (\`GET /api/v1/organization\`) and chooses one (\`POST /api/v3/auth/select-organization\`), as the Infisical CLI's \`infisical login\` does. Wrong credentials answer 401. ${throttled}`,
          permission: PUBLIC,
          effects: 'None: the session opens when an organization is chosen.',
          errors: [401, 429],
        }),
        body: z.object(userCredentials),
        response: { 200: z.object({ accessToken: z.string().describe('The login token: send it as `Authorization: Bearer <token>` to the two routes above.') }) },
      },
    },
    async (request) => userLogin.loginToChoose(request.body, requestOrigin(request)),
  );

  app.post(
    '/api/v3/auth/select-organization',
    {
      onRequest,
      schema: {
        tags,
        ...describeRoute({
          summary: 'Choose the organization to log in to',
          description: "Opens a 10-day user session in one of the user's organizations. An organization the user has not joined answers 401.",
          permission: loginTokenRule,
          effects: changes('Opens a session.', 'login-user'),
          errors: [401, 403],
        }),
        body: z.object({ organizationId: id().describe('The organization to log in to.') }),
        response: {
          200: z.object({
            token: z.string().describe('The user access token: send it as `Authorization: Bearer <token>`.'),
            isMfaEnabled: z.literal(false).describe('Always false: an enrolled second factor is checked before the login token is issued.'),
          }),
        },
      },
    },
    async (request) => userLogin.selectOrganization(request.loginUserId, request.body.organizationId, requestOrigin(request)),
  );

  app.get(
    '/api/v1/organization',
    {
      onRequest,
      schema: {
        tags,
        ...describeRoute({
          summary: "List the user's organizations",
          description: 'The organizations the user has joined, by name: the choices for `POST /api/v3/auth/select-organization`.',
          permission: loginTokenRule,
          effects: reads(),
          errors: [401, 403],
        }),
        response: {
          200: z.object({
            organizations: z.array(z.object({ id: z.string(), name: z.string(), slug: z.string(), createdAt: z.string(), updatedAt: z.string() })),
          }),
        },
      },
    },
    async (request) => ({ organizations: await userLogin.organizations(request.loginUserId) }),
  );

  app.post(
    '/api/v1/invite-org/accept',
    {
      schema: {
        tags: ['Users'],
        ...describeRoute({
          summary: 'Accept an invite',
          description: `Joins the organization an invite is for, with the invite token it answered and a password; the user then logs in with \`POST /api/v1/auth/login\`. A wrong or expired invite answers 401. ${throttled}`,
          permission: PUBLIC,
          effects: changes('Creates the user (or joins an existing one to the organization) and uses up the invite.', 'accept-org-invite'),
          errors: [401, 429],
        }),
        body: z.object({
          email: email().describe('The email the invite was sent to.'),
          organizationId,
          inviteToken: required(256).describe('The invite token (given once, when the user was invited).'),
          password,
          firstName: optional(text(64)).describe("The user's first name."),
          lastName: optional(text(64)).describe("The user's last name."),
        }),
        response: { 200: z.object({ message: z.string(), user: publicUserSchema, organizationId: z.string() }) },
      },
    },
    async (request) => invites.accept(request.body, requestOrigin(request)),
  );
}

const accessTokenBody = z.object({ accessToken: required(4096).describe("A machine identity's access token.") });
const bodyTokenRule =
  'the holder of the token in the body (no Authorization header is needed); an Authorization header, when sent, must belong to someone allowed to manage that identity.';

/** Renew and revoke take the token in the body, with or without an Authorization header (as the reference). */
export function bodyTokenRoutes(app: ZodApp, { tokens }: Services): void {
  app.post(
    '/api/v1/auth/token/renew',
    {
      schema: {
        tags,
        ...describeRoute({
          summary: 'Renew an access token',
          description: `Restarts an identity access token's TTL, never past its max TTL (400 beyond it). Answers the same token with its new lifetime. Who may call it: ${bodyTokenRule}`,
          permission: PUBLIC,
          effects: changes("Restarts the token's TTL.", 'renew-identity-access-token'),
          errors: [401, 403],
        }),
        body: accessTokenBody,
        response: { 200: tokenResponseSchema },
      },
    },
    async (request) => {
      const caller = await tokens.callerOf(request.headers.authorization, request.body.accessToken, requestOrigin(request));
      return tokens.renew(caller, request.body.accessToken);
    },
  );

  app.post(
    '/api/v1/auth/token/revoke',
    {
      schema: {
        tags,
        ...describeRoute({
          summary: 'Revoke an access token',
          description: `Revokes an identity access token: it stops working at once. Who may call it: ${bodyTokenRule}`,
          permission: PUBLIC,
          effects: changes('Revokes the token.', 'revoke-identity-access-token'),
          errors: [401, 403],
        }),
        body: accessTokenBody,
        response: { 200: z.object({ message: z.string().describe('What was done.') }) },
      },
    },
    async (request) => {
      const caller = await tokens.callerOf(request.headers.authorization, request.body.accessToken, requestOrigin(request));
      return tokens.revoke(caller, request.body.accessToken);
    },
  );
}

export function tokenRoutes(app: ZodApp, { tokens }: Services): void {
  app.post(
    '/api/v1/auth/logout',
    {
      schema: {
        tags,
        ...describeRoute({
          summary: 'Log out',
          description: "Ends the session of the user's token this request carries, or revokes the identity access token it carries.",
          permission: 'any caller with a token: it ends its own.',
          effects:
            'Ends the session or revokes the token. Recorded in the audit log as `logout-user` (users) or `revoke-identity-access-token` (identities), in the same transaction.',
          errors: [400],
        }),
        response: { 200: z.object({ message: z.string().describe('What was done.') }) },
      },
    },
    async (request) => tokens.logout(request.actor),
  );
}
