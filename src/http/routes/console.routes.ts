import { z } from 'zod';
import { accountUserOf, actsForAccount } from '../../auth/account-reach.ts';
import { USER_SESSION_TTL_SECONDS } from '../../auth/auth-service.ts';
import { ForbiddenError } from '../../errors.ts';
import type { Services } from '../../app/container.ts';
import { email, id, optional, password, required } from '../../validation/input.ts';
import { requestOrigin } from '../authenticate.ts';
import { clearConsoleCookie, CONSOLE_HEADER, requireConsoleHeader, setConsoleCookie } from '../console/console-cookie.ts';
import { changes, describeRoute, PUBLIC, reads } from '../docs/operation-doc.ts';
import type { ZodApp } from '../zod-app.ts';

const tags = ['Console'];
const SESSION = '/api/v1/console/session';
const cookieRule = `The session travels in the HttpOnly, SameSite=Strict cookie \`coffer_console\` (never in a body); every request that carries it must send \`${CONSOLE_HEADER}: 1\` (403 \`ConsoleHeaderMissing\` otherwise).`;

const sessionSchema = z.object({
  user: z.object({ id: z.string(), email: z.string() }),
  organizationId: z.string().describe('The organization the session acts in.'),
  organizations: z.array(z.object({ id: z.string(), name: z.string(), slug: z.string() })).describe('The organizations the user may switch to.'),
});

/** The console's sign-in: the user login, answered with the session cookie instead of a token in the body. */
export function publicConsoleRoutes(app: ZodApp, { userLogin }: Services): void {
  app.post(
    SESSION,
    {
      schema: {
        tags,
        ...describeRoute({
          summary: 'Sign in to the console',
          description: `The user login of \`POST /api/v1/auth/login\` (throttled the same way) for the web console: the session is set as a cookie. ${cookieRule}`,
          permission: PUBLIC,
          effects: changes('Opens a session.', 'login-user'),
          errors: [401, 403, 429],
        }),
        body: z.object({
          email: email().describe("The user's email."),
          password: password(1).describe("The user's password."),
          totpCode: optional(required(16)).describe('A current TOTP code, when the user has enrolled one.'),
          recoveryCode: optional(required(32)).describe('One of the recovery codes, in place of `totpCode`.'),
          organizationId: optional(id()).describe(
            'The organization to sign in to; when absent, the only one the user belongs to, or the one they joined first (switch with `PUT /api/v1/console/session/organization`).',
          ),
        }),
        response: { 200: z.object({ organizationId: z.string(), expiresIn: z.number().describe('Seconds until the session ends.') }) },
      },
    },
    async (request, reply) => {
      requireConsoleHeader(request);
      const session = await userLogin.login({ ...request.body, firstOrganization: true }, requestOrigin(request));
      setConsoleCookie(request, reply, session.accessToken, session.expiresIn);
      return { organizationId: session.organizationId, expiresIn: session.expiresIn };
    },
  );
}

function requireUserActor(kind: string, userId: string): string {
  if (kind !== 'user') throw new ForbiddenError('Only a user has a console session', 'NotAUser');
  return userId;
}

/** The signed-in user's console session: who, which organization, switch organization, sign out. */
export function consoleSessionRoutes(app: ZodApp, { userLogin, tokens }: Services): void {
  app.get(
    SESSION,
    {
      schema: {
        tags,
        ...describeRoute({
          summary: 'The console session',
          description: `The signed-in user, the organization the session acts in and the organizations they may switch to. ${cookieRule}`,
          permission: 'a user with a session.',
          effects: reads(),
          errors: [401, 403],
        }),
        response: { 200: sessionSchema },
      },
    },
    async (request) => {
      const { actor } = request;
      const userId = requireUserActor(actor.kind, actor.id);
      // a session opened through single sign-on acts in its organization only: it names no other
      const organizations = actsForAccount(actor) ? await userLogin.organizations(userId) : await userLogin.organizationsAmong(userId, [actor.orgId]);
      return {
        user: { id: userId, email: actor.name },
        organizationId: actor.orgId,
        organizations: organizations.map(({ id, name, slug }) => ({ id, name, slug })),
      };
    },
  );

  app.put(
    `${SESSION}/organization`,
    {
      schema: {
        tags,
        ...describeRoute({
          summary: 'Switch organization',
          description: `Opens a session in another of the user's organizations (401 for one they have not joined) and ends this one. Only a session signed in with the account's password switches: one opened through an organization's single sign-on acts in that organization only (403 \`AccountSignInRequired\`). ${cookieRule}`,
          permission: 'a user with a session, into an organization they have joined.',
          effects: `${changes('Opens a session in the organization.', 'login-user')} The current session ends as on sign-out (\`logout-user\`).`,
          errors: [401, 403],
        }),
        body: z.object({ organizationId: id().describe('The organization to switch to.') }),
        response: { 200: z.object({ organizationId: z.string(), expiresIn: z.number() }) },
      },
    },
    async (request, reply) => {
      const { actor } = request;
      requireUserActor(actor.kind, actor.id);
      const { token } = await userLogin.selectOrganization(accountUserOf(actor), request.body.organizationId, requestOrigin(request));
      await tokens.logout(actor);
      setConsoleCookie(request, reply, token, USER_SESSION_TTL_SECONDS);
      return { organizationId: request.body.organizationId, expiresIn: USER_SESSION_TTL_SECONDS };
    },
  );

  app.delete(
    SESSION,
    {
      schema: {
        tags,
        ...describeRoute({
          summary: 'Sign out of the console',
          description: `Ends the session and clears its cookie. ${cookieRule}`,
          permission: 'a user with a session: it ends its own.',
          effects: changes('Ends the session.', 'logout-user'),
          errors: [401, 403],
        }),
        response: { 200: z.object({ message: z.string() }) },
      },
    },
    async (request, reply) => {
      requireUserActor(request.actor.kind, request.actor.id);
      const answer = await tokens.logout(request.actor);
      clearConsoleCookie(request, reply);
      return answer;
    },
  );
}
