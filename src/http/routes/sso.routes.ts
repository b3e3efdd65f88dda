import { z } from 'zod';
import type { Services } from '../../app/container.ts';
import { createOidcConfigBody, oidcConfigSchema, updateOidcConfigBody } from '../../sso/oidc-config-schema.ts';
import { id, optional, slug, text } from '../../validation/input.ts';
import { requestOrigin } from '../authenticate.ts';
import { changes, describeRoute, orgPermission, PUBLIC, reads } from '../docs/operation-doc.ts';
import type { ZodApp } from '../zod-app.ts';

const tags = ['Single sign-on'];

const userTokenSchema = z.object({
  accessToken: z.string().describe('The user access token: send it as `Authorization: Bearer <token>`.'),
  expiresIn: z.number().describe('Seconds until it expires.'),
  tokenType: z.literal('Bearer'),
  organizationId: z.string().describe('The organization it acts in.'),
});

/** The sign-in itself: the browser is sent to the provider and comes back to the callback. */
export function publicSsoRoutes(app: ZodApp, { oidcLogin }: Services): void {
  app.get(
    '/api/v1/sso/oidc/login',
    {
      schema: {
        tags,
        ...describeRoute({
          summary: 'Start an OIDC sign-in',
          description:
            "Redirects (302) the browser to the organization's OIDC provider, with a fresh state, nonce and PKCE challenge (S256) that Coffer keeps for 10 minutes, for one callback. An organization without an active configuration answers 400 `SsoNotConfigured`; a provider whose discovery document cannot be read, 400 `SsoDiscoveryFailed`.",
          permission: PUBLIC,
          effects: 'Records the sign-in under way (no audit entry: nothing is granted yet).',
          errors: [400, 404],
        }),
        querystring: z.object({ orgSlug: slug().describe("The organization's slug.") }),
      },
    },
    async (request, reply) => reply.redirect(await oidcLogin.start(request.query.orgSlug, requestOrigin(request)), 302),
  );

  app.get(
    '/api/v1/sso/oidc/callback',
    {
      schema: {
        tags,
        ...describeRoute({
          summary: 'Finish an OIDC sign-in',
          description:
            "Where the provider sends the browser back; its credential is the state from `GET /api/v1/sso/oidc/login` (each works once) and the provider's code. The state must be one Coffer issued, unused and unexpired (401 `SsoStateInvalid`); the code is exchanged with the PKCE verifier and the ID token verified — signature against the issuer's keys, issuer, audience, expiry (60 s clock tolerance), nonce — else 401 `SsoTokenInvalid`. The e-mail must be verified by the provider (403 `SsoEmailNotVerified`) and of an allowed domain (403 `SsoEmailDomainNotAllowed`). The first sign-in creates the user or links the account (an invited one too) with that e-mail; the group mappings are applied again at every sign-in. Answers a 10-day user access token, as `POST /api/v1/auth/login`.",
          permission: PUBLIC,
          effects: changes(
            'Opens a session; may create the user, accept their invite, and change the roles the group mappings give. A refused sign-in is audited too, with the reason code.',
            'login-user-sso',
          ),
          errors: [400, 401, 403],
        }),
        querystring: z.object({
          code: optional(text(4096)).describe('The authorization code.'),
          state: optional(text(512)).describe('The state of the sign-in.'),
          iss: optional(text(2048)).describe('The issuer (RFC 9207), when the provider sends it.'),
          error: optional(text(256)).describe('The provider’s error, when it refused.'),
        }),
        response: { 200: userTokenSchema },
      },
    },
    async (request) => oidcLogin.callback(request.url.split('?')[1] ?? '', requestOrigin(request)),
  );
}

const orgSlugQuery = z.object({ orgSlug: slug().describe("The organization's slug.") });

/** An organization's OIDC configuration and sign-in policy (admins). */
export function ssoConfigRoutes(app: ZodApp, { oidcConfigs }: Services): void {
  app.get(
    '/api/v1/sso/oidc/config',
    {
      schema: {
        tags,
        ...describeRoute({
          summary: "Get the organization's OIDC configuration",
          description: 'The configuration without its client secret. None answers 404 `SsoNotConfigured`.',
          permission: orgPermission('read', 'settings'),
          effects: reads(),
          errors: [404],
        }),
        querystring: orgSlugQuery,
        response: { 200: oidcConfigSchema },
      },
    },
    async (request) => oidcConfigs.get(request.actor, request.query.orgSlug),
  );

  app.post(
    '/api/v1/sso/oidc/config',
    {
      schema: {
        tags,
        ...describeRoute({
          summary: 'Configure OIDC single sign-on',
          description:
            'Sets up sign-in with an OIDC provider found by discovery. The client secret is stored sealed under the root key and never answered. Group mappings name organization roles, or roles in projects of this organization (400 `InvalidGroupMapping` otherwise). A second configuration answers 409 `SsoConfigExists`. Register `callbackURL` of the answer as the redirect URI at the provider.',
          permission: orgPermission('edit', 'settings'),
          effects: changes('Creates the configuration.', 'create-oidc-config'),
          errors: [400, 409],
        }),
        body: createOidcConfigBody,
        response: { 200: oidcConfigSchema },
      },
    },
    async (request) => oidcConfigs.create(request.actor, request.body),
  );

  app.patch(
    '/api/v1/sso/oidc/config',
    {
      schema: {
        tags,
        ...describeRoute({
          summary: 'Update the OIDC configuration',
          description: 'Changes the fields given. Turning it off (`isActive: false`) also stops enforcing single sign-on.',
          permission: orgPermission('edit', 'settings'),
          effects: changes('Updates the configuration.', 'update-oidc-config'),
          errors: [400, 404],
        }),
        body: updateOidcConfigBody,
        response: { 200: oidcConfigSchema },
      },
    },
    async (request) => oidcConfigs.update(request.actor, request.body),
  );

  app.patch(
    '/api/v1/organization/:organizationId',
    {
      schema: {
        tags,
        ...describeRoute({
          summary: "Set the organization's sign-in policy",
          description:
            'With `authEnforced`, members sign in only through single sign-on: password sign-in and password reset answer 403 `SsoEnforced` (org admins keep the break-glass path, README Single sign-on); it needs an active OIDC configuration (400 `SsoNotConfigured`). With `enforceMfa`, password sign-ins need a TOTP code.',
          permission: orgPermission('edit', 'settings'),
          effects: changes('Updates the policy.', 'update-org-auth-policy'),
          errors: [400],
        }),
        params: z.object({ organizationId: id().describe("The organization's id (the caller's).") }),
        body: z.object({
          authEnforced: z.boolean().optional().describe('Members must sign in with single sign-on.'),
          enforceMfa: z.boolean().optional().describe('Password sign-ins need a second factor.'),
        }),
        response: {
          200: z.object({
            organization: z.object({ id: z.string(), name: z.string(), slug: z.string(), authEnforced: z.boolean(), enforceMfa: z.boolean(), updatedAt: z.string() }),
          }),
        },
      },
    },
    async (request) => oidcConfigs.updatePolicy(request.actor, request.params.organizationId, request.body),
  );
}
