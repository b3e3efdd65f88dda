import { afterAll, beforeAll, expect, test } from 'vitest';
import { type AccessFixture, accessFixture } from '../support/access-fixture.ts';
import { snapshotDatabase, startTestApp, type TestApp } from '../support/test-app.ts';

let app: TestApp;
let fx: AccessFixture;
let target: { id: string; clientSecretId: string };
let outsiderId: string;
const UNKNOWN = '00000000-0000-0000-0000-000000000000';

beforeAll(async () => {
  app = await startTestApp();
  fx = await accessFixture(app);
  const identity = await fx.identity('errors-target', 'member', 'viewer');
  target = { id: identity.id, ...(await fx.universalAuth(identity.id)) };
  outsiderId = (await fx.identity('errors-outsider')).id;
});
afterAll(async () => app?.close());

type Case = [string, string, () => string, unknown, number, string?];

/** [name, method, url, body (query for GET), status, error]: each is refused and changes nothing. */
const cases: Case[] = [
  ['identity with a name too long', 'POST', () => '/api/v1/identities', { name: 'x'.repeat(65), organizationId: 'ORG' }, 422, 'ValidationFailure'],
  ['identity update with an unknown role', 'PATCH', () => `/api/v1/identities/${target.id}`, { role: 'owner' }, 422],
  ['unknown identity', 'GET', () => `/api/v1/identities/${UNKNOWN}`, undefined, 404, 'NotFound'],
  ['non-UUID identity', 'DELETE', () => '/api/v1/identities/nope', undefined, 404],
  ['universal auth with a TTL too long', 'PATCH', () => `/api/v1/auth/universal-auth/identities/${target.id}`, { accessTokenTTL: 315360001 }, 422],
  ['universal auth TTL above the max TTL', 'PATCH', () => `/api/v1/auth/universal-auth/identities/${target.id}`, { accessTokenTTL: 3000000 }, 400, 'InvalidTTL'],
  ['client secret with a fractional limit', 'POST', () => `/api/v1/auth/universal-auth/identities/${target.id}/client-secrets`, { numUsesLimit: 1.5 }, 422],
  ['unknown client secret', 'POST', () => `/api/v1/auth/universal-auth/identities/${target.id}/client-secrets/${UNKNOWN}/revoke`, undefined, 404],
  ['universal auth of an identity without it', 'GET', () => `/api/v1/auth/universal-auth/identities/${fx.identityId}`, undefined, 404],
  ['login without a secret', 'POST', () => '/api/v1/auth/universal-auth/login', { clientId: 'x' }, 422],
  ['renew without a token', 'POST', () => '/api/v1/auth/token/renew', {}, 422],
  ['renew of a malformed token', 'POST', () => '/api/v1/auth/token/renew', { accessToken: 'not-a-jwt' }, 403, 'TokenError'],
  ['revoke of a malformed token', 'POST', () => '/api/v1/auth/token/revoke', { accessToken: 'a.b.c' }, 403, 'TokenError'],
  ['user login with a bad email', 'POST', () => '/api/v1/auth/login', { email: 'nope', password: 'x' }, 422],
  ['invite with a bad email', 'POST', () => '/api/v1/invite-org/signup', { inviteeEmails: ['nope'], organizationId: 'ORG' }, 422],
  ['invite into another organization', 'POST', () => '/api/v1/invite-org/signup', { inviteeEmails: ['a@example.com'], organizationId: UNKNOWN }, 403],
  ['memberships of another organization', 'GET', () => `/api/v2/organizations/${UNKNOWN}/memberships`, undefined, 403],
  ['adding nobody to a project', 'POST', () => `/api/v2/workspace/${fx.projectId}/memberships`, {}, 400, 'NoUsers'],
  ['adding a stranger to a project', 'POST', () => `/api/v2/workspace/${fx.projectId}/memberships`, { emails: ['stranger@example.com'] }, 404],
  ['roles of an unknown user membership', 'PATCH', () => `/api/v1/workspace/${fx.projectId}/memberships/${UNKNOWN}`, { roles: [{ role: 'viewer' }] }, 404],
  [
    'a temporary role without its range',
    'PATCH',
    () => `/api/v1/workspace/${fx.projectId}/memberships/${UNKNOWN}`,
    { roles: [{ role: 'viewer' }, { role: 'admin', isTemporary: true }] },
    422,
  ],
  ['an identity twice in a project', 'POST', () => `/api/v2/workspace/${fx.projectId}/identity-memberships/${target.id}`, {}, 400, 'AlreadyMember'],
  ['an unknown identity in a project', 'POST', () => `/api/v2/workspace/${fx.projectId}/identity-memberships/${UNKNOWN}`, {}, 404],
  [
    'a role with an unknown subject',
    'POST',
    () => `/api/v1/workspace/${fx.projectId}/roles`,
    { slug: 'r', name: 'r', permissions: [{ subject: 'everything', action: 'read' }] },
    422,
  ],
  [
    'a role with an unknown action',
    'POST',
    () => `/api/v1/workspace/${fx.projectId}/roles`,
    { slug: 'r', name: 'r', permissions: [{ subject: 'secrets', action: 'manage' }] },
    422,
  ],
  ['a role with a bad slug', 'POST', () => `/api/v1/workspace/${fx.projectId}/roles`, { slug: 'Not A Slug', name: 'r', permissions: [] }, 422],
  ['roles of an unknown project', 'GET', () => '/api/v1/workspace/no-such-project/roles', undefined, 404],
  ['an unknown role', 'DELETE', () => `/api/v1/workspace/${fx.projectId}/roles/${UNKNOWN}`, undefined, 404],
  [
    'a privilege for a non-member',
    'POST',
    () => '/api/v1/additional-privilege/identity/permanent',
    () => ({ identityId: outsiderId, projectSlug: 'PROJECT', permissions: [{ subject: 'secrets', action: 'read' }] }),
    404,
  ],
  ['a privilege in an unknown project', 'GET', () => '/api/v1/additional-privilege/identity', () => ({ identityId: target.id, projectSlug: 'nope-project' }), 404],
  ['an unknown privilege', 'GET', () => '/api/v1/additional-privilege/identity/nope', () => ({ identityId: target.id, projectSlug: 'PROJECT' }), 404],
  ['op 17 without its query', 'GET', () => '/api/v1/additional-privilege/identity/nope', {}, 422],
  [
    'a temporary privilege with a bad start',
    'POST',
    () => '/api/v1/additional-privilege/identity/temporary',
    () => ({
      identityId: target.id,
      projectSlug: 'PROJECT',
      permissions: [{ subject: 'secrets', action: 'read' }],
      temporaryMode: 'relative',
      temporaryRange: '1h',
      temporaryAccessStartTime: 'yesterday',
    }),
    422,
  ],
];

test.each(cases)('%s is refused and changes nothing', async (_name, method, url, payload, status, code) => {
  const fill = (value: unknown) =>
    JSON.parse(
      JSON.stringify((typeof value === 'function' ? value() : value) ?? {})
        .replaceAll('"ORG"', JSON.stringify(fx.orgId))
        .replaceAll('"PROJECT"', JSON.stringify(fx.projectSlug)),
    );
  const before = await snapshotDatabase(app.database);
  const options = method === 'GET' ? { query: fill(payload) } : payload === undefined ? {} : { body: fill(payload) };
  const response = await app.request(method, url(), { token: fx.token, ...options });
  expect(response.status, JSON.stringify(response.body)).toBe(status);
  // `error` is Infisical's name (BadRequest for every 400), `code` Coffer's specific one
  const names = code ? { code, error: status === 400 ? 'BadRequest' : code } : {};
  expect(response.body).toMatchObject({ statusCode: status, message: expect.any(String), reqId: expect.any(String), ...names });
  expect(await snapshotDatabase(app.database)).toEqual(before);
});
