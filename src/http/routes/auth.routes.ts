import { z } from 'zod';
import type { Services } from '../../services/container.ts';
import { loginBody, tokenResponseSchema } from '../../universal-auth/ua-schema.ts';
import { publicUserSchema } from '../../users/user-schema.ts';
import type { ZodApp } from '../app.ts';
import { requestOrigin } from '../authenticate.ts';
import { id, optional, required, text } from '../../validation/input.ts';

const tags = ['Authentication'];
const password = z.string().min(8, 'must be at least 8 characters').max(1024);
const throttled =
  'Failed attempts are counted per credential and per source address; past the limit every attempt answers 429 RateLimitExceeded with Retry-After until the lockout ends (see the README, Login throttling).';

/** Routes that take credentials instead of an access token. */
export function publicAuthRoutes(app: ZodApp, { universalAuthLogin, userLogin, invites }: Services): void {
  app.post(
    '/api/v1/auth/universal-auth/login',
    {
      schema: { tags, summary: 'Log in a machine identity with a client id and secret (JSON or form body)', description: throttled, body: loginBody, response: { 200: tokenResponseSchema } },
    },
    async (request) => universalAuthLogin.login(request.body, requestOrigin(request)),
  );

  app.post(
    '/api/v1/auth/login',
    {
      schema: {
        tags,
        summary: 'Log in a user with email and password',
        description: throttled,
        body: z.object({ email: z.email(), password: z.string().min(1).max(1024), organizationId: optional(id()) }),
        response: { 200: z.object({ accessToken: z.string(), expiresIn: z.number(), tokenType: z.literal('Bearer'), organizationId: z.string() }) },
      },
    },
    async (request) => userLogin.login(request.body, requestOrigin(request)),
  );

  app.post(
    '/api/v1/invite-org/accept',
    {
      schema: {
        tags: ['Users'],
        summary: 'Accept an organization invite with the invite token and a password',
        description: throttled,
        body: z.object({
          email: z.email(),
          organizationId: id(),
          inviteToken: required(256),
          password,
          firstName: optional(text(64)),
          lastName: optional(text(64)),
        }),
        response: { 200: z.object({ message: z.string(), user: publicUserSchema, organizationId: z.string() }) },
      },
    },
    async (request) => invites.accept(request.body, requestOrigin(request)),
  );
}

const accessTokenBody = z.object({ accessToken: required(4096) });
const bodyTokenNote = 'The token in the body is enough; an Authorization header, when sent, must be allowed to manage that identity.';

/** Renew and revoke take the token in the body, with or without an Authorization header (as the reference). */
export function bodyTokenRoutes(app: ZodApp, { tokens }: Services): void {
  app.post(
    '/api/v1/auth/token/renew',
    {
      schema: {
        tags,
        summary: "Restart an identity access token's TTL (up to its max TTL)",
        description: bodyTokenNote,
        security: [],
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
        summary: 'Revoke an identity access token',
        description: bodyTokenNote,
        security: [],
        body: accessTokenBody,
        response: { 200: z.object({ message: z.string() }) },
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
    { schema: { tags, summary: 'End the session (or revoke the access token) this request carries', response: { 200: z.object({ message: z.string() }) } } },
    async (request) => tokens.logout(request.actor),
  );
}
