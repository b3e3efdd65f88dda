import type { JWTPayload } from 'jose';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { type IdTokenTamper, startOidcProvider, type TestOidcProvider } from '../support/oidc-provider.ts';
import { type AccessFixture, accessFixture, otherOrganization } from '../support/access-fixture.ts';
import { addUserToOrg } from '../../src/orgs/org-membership-service.ts';
import { startTestApp, type TestApp } from '../support/test-app.ts';

// OIDC single sign-on against a real provider (oidc-provider on 127.0.0.1): the sign-in end to end, and every
// hostile answer refused with its error code, nothing granted.

const CALLBACK = 'http://127.0.0.1:8080/api/v1/sso/oidc/callback';

let app: TestApp;
let fx: AccessFixture;
let provider: TestOidcProvider;
let orgSlug: string;

beforeAll(async () => {
  provider = await startOidcProvider([CALLBACK]);
  app = await startTestApp();
  fx = await accessFixture(app, 'sso-project');
  orgSlug = (await app.database.db.selectFrom('organizations').select('slug').executeTakeFirstOrThrow()).slug;
  provider.accounts.set('alice', { email: 'alice@example.com', emailVerified: true, groups: ['engineering'] });
  provider.accounts.set('mallory', { email: 'mallory@example.com', emailVerified: false, groups: [] });
  provider.accounts.set('eve', { email: 'eve@other-company.com', emailVerified: true, groups: [] });
  const configured = await app.request('POST', '/api/v1/sso/oidc/config', {
    token: fx.token,
    body: {
      orgSlug,
      discoveryURL: provider.issuer,
      clientId: provider.clientId,
      clientSecret: provider.clientSecret,
      allowedEmailDomains: 'example.com',
      scopes: 'openid email profile groups',
      groupMappings: [{ group: 'engineering', projectId: fx.projectId, projectRole: 'member' }],
    },
  });
  expect(configured.status, JSON.stringify(configured.body)).toBe(200);
});
afterAll(async () => {
  await app?.close();
  await provider?.close();
});

/** Starts a sign-in as `account` and walks the browser through the provider; answers the callback URL. */
async function authorize(account: string, slug = orgSlug): Promise<URL> {
  const started = await app.request('GET', '/api/v1/sso/oidc/login', { query: { orgSlug: slug } });
  expect(started.status, JSON.stringify(started.body)).toBe(302);
  provider.signInAs(account);
  return provider.authorize(String(started.headers.location), CALLBACK);
}

const finish = (callback: URL | string) => app.request('GET', `/api/v1/sso/oidc/callback${typeof callback === 'string' ? callback : callback.search}`);

async function signIn(account: string, tamper?: IdTokenTamper, slug = orgSlug) {
  const callback = await authorize(account, slug);
  provider.tamperWith(tamper);
  try {
    return await finish(callback);
  } finally {
    provider.tamperWith(undefined);
  }
}

const sessionsOf = async (email: string) =>
  app.database.db.selectFrom('userSessions as s').innerJoin('users as u', 'u.id', 's.userId').select('s.id').where('u.email', '=', email).execute();

describe('a sign-in through the provider', () => {
  test('creates the user, opens a session whose token works, and audits the sign-in', async () => {
    const signedIn = await signIn('alice');
    expect(signedIn.status, JSON.stringify(signedIn.body)).toBe(200);
    expect(signedIn.body).toMatchObject({ tokenType: 'Bearer', organizationId: fx.orgId, accessToken: expect.any(String) });
    const projects = await app.request('GET', '/api/v1/workspace', { token: signedIn.body.accessToken });
    expect(projects.status).toBe(200);
    expect(projects.body.workspaces.map((project: { id: string }) => project.id)).toContain(fx.projectId);
    const audit = await app.request('GET', '/api/v1/organization/audit-logs', { token: fx.token, query: { eventType: 'login-user-sso' } });
    const entry = audit.body.auditLogs.find((log: { event: { type: string } }) => log.event.type === 'login-user-sso');
    expect(entry.event.metadata).toMatchObject({ method: 'oidc', provider: provider.issuer, result: 'success' });
  });

  test('the start route redirects to the provider with PKCE (S256), state and nonce', async () => {
    const started = await app.request('GET', '/api/v1/sso/oidc/login', { query: { orgSlug } });
    const location = new URL(String(started.headers.location));
    expect(location.origin).toBe(provider.issuer);
    expect(location.searchParams.get('code_challenge_method')).toBe('S256');
    expect(location.searchParams.get('state')).toBeTruthy();
    expect(location.searchParams.get('nonce')).toBeTruthy();
    expect(location.searchParams.get('redirect_uri')).toBe(CALLBACK);
  });
});

describe('hostile answers are refused and open no session', () => {
  const resign =
    (change: (claims: JWTPayload) => JWTPayload, signer: 'provider' | 'other' = 'provider'): IdTokenTamper =>
    (claims, sign) =>
      sign[signer](change(claims));

  const algNone: IdTokenTamper = (claims, sign) => Promise.resolve(sign.none(claims));

  test('the same claims re-signed with the provider key pass (the rewriting alone breaks nothing)', async () => {
    const signedIn = await signIn(
      'alice',
      resign((claims) => claims),
    );
    expect(signedIn.status, JSON.stringify(signedIn.body)).toBe(200);
  });

  test.each([
    ['wrong issuer', resign((claims) => ({ ...claims, iss: 'http://127.0.0.1:1/evil' }))],
    ['wrong audience', resign((claims) => ({ ...claims, aud: 'another-client' }))],
    ['expired token', resign((claims) => ({ ...claims, iat: Math.floor(Date.now() / 1000) - 7200, exp: Math.floor(Date.now() / 1000) - 3600 }))],
    ['wrong nonce', resign((claims) => ({ ...claims, nonce: 'not-the-nonce' }))],
    ['missing nonce', resign(({ nonce: _nonce, ...claims }) => claims)],
    ['signed by another key', resign((claims) => claims, 'other')],
    ['alg none', algNone],
  ])('%s → 401 SsoTokenInvalid', async (_name, tamper) => {
    const before = (await sessionsOf('alice@example.com')).length;
    const refused = await signIn('alice', tamper);
    expect(refused.status, JSON.stringify(refused.body)).toBe(401);
    expect(refused.body).toMatchObject({ statusCode: 401, code: 'SsoTokenInvalid' });
    expect((await sessionsOf('alice@example.com')).length).toBe(before);
  });

  test('a replayed callback (same code and state) is refused', async () => {
    const callback = await authorize('alice');
    expect((await finish(callback)).status).toBe(200);
    const replayed = await finish(callback);
    expect(replayed.status).toBe(401);
    expect(replayed.body.code).toBe('SsoStateInvalid');
  });

  test('a used code under a fresh state is refused by the provider', async () => {
    const used = await authorize('alice');
    expect((await finish(used)).status).toBe(200);
    const fresh = await authorize('alice');
    const forged = new URLSearchParams(fresh.search);
    forged.set('code', new URLSearchParams(used.search).get('code')!);
    const refused = await finish(`?${forged.toString()}`);
    expect(refused.status).toBe(401);
    expect(refused.body.code).toBe('SsoTokenInvalid');
  });

  test('a missing or unknown state is refused', async () => {
    const callback = await authorize('alice');
    const code = new URLSearchParams(callback.search).get('code')!;
    const missing = await finish(`?code=${encodeURIComponent(code)}`);
    expect(missing.status).toBe(401);
    expect(missing.body.code).toBe('SsoStateInvalid');
    const wrong = await finish(`?code=${encodeURIComponent(code)}&state=made-up-state`);
    expect(wrong.status).toBe(401);
    expect(wrong.body.code).toBe('SsoStateInvalid');
  });

  test('an e-mail the provider has not verified is refused', async () => {
    const refused = await signIn('mallory');
    expect(refused.status).toBe(403);
    expect(refused.body.code).toBe('SsoEmailNotVerified');
    expect(await app.database.db.selectFrom('users').select('id').where('email', '=', 'mallory@example.com').execute()).toEqual([]);
  });

  test('an e-mail of a domain the organization does not allow is refused', async () => {
    const refused = await signIn('eve');
    expect(refused.status).toBe(403);
    expect(refused.body.code).toBe('SsoEmailDomainNotAllowed');
    expect(await app.database.db.selectFrom('users').select('id').where('email', '=', 'eve@other-company.com').execute()).toEqual([]);
  });

  test('refusals are audited with their reason, never a code or token', async () => {
    const audit = await app.request('GET', '/api/v1/organization/audit-logs', { token: fx.token, query: { eventType: 'login-user-sso', limit: '200' } });
    const failures = audit.body.auditLogs.filter((log: { event: { metadata: { result: string } } }) => log.event.metadata.result === 'failure');
    expect(failures.length).toBeGreaterThan(5);
    const reasons = failures.map((log: { event: { metadata: { reason: string } } }) => log.event.metadata.reason);
    expect(reasons).toContain('SsoEmailNotVerified');
    expect(JSON.stringify(failures)).not.toMatch(/eyJ[\w-]+\./);
  });
});

describe('group mappings, applied again at every sign-in', () => {
  const projectsOf = async (token: string) =>
    ((await app.request('GET', '/api/v1/workspace', { token })).body.workspaces as { id: string }[]).map((project) => project.id);

  test('a group grants its project role and org role, and leaving the group takes them away at the next sign-in', async () => {
    const patched = await app.request('PATCH', '/api/v1/sso/oidc/config', {
      token: fx.token,
      body: {
        orgSlug,
        groupMappings: [
          { group: 'engineering', projectId: fx.projectId, projectRole: 'member' },
          { group: 'platform-admins', orgRole: 'admin' },
        ],
      },
    });
    expect(patched.status, JSON.stringify(patched.body)).toBe(200);
    provider.accounts.set('carol', { email: 'carol@example.com', emailVerified: true, groups: ['engineering', 'platform-admins'] });
    const first = await signIn('carol');
    expect(first.status).toBe(200);
    expect(await projectsOf(first.body.accessToken)).toContain(fx.projectId);
    const invited = await app.request('POST', '/api/v1/invite-org/signup', {
      token: first.body.accessToken,
      body: { inviteeEmails: ['someone@example.com'], organizationId: fx.orgId, organizationRoleSlug: 'admin' },
    });
    expect(invited.status, 'an org admin through the mapping').toBe(200);

    provider.accounts.set('carol', { email: 'carol@example.com', emailVerified: true, groups: [] });
    const second = await signIn('carol');
    expect(second.status).toBe(200);
    expect(await projectsOf(second.body.accessToken)).not.toContain(fx.projectId);
    const refused = await app.request('POST', '/api/v1/invite-org/signup', {
      token: second.body.accessToken,
      body: { inviteeEmails: ['someone-else@example.com'], organizationId: fx.orgId, organizationRoleSlug: 'admin' },
    });
    expect(refused.status, 'back to the default org role').toBe(403);
    const audit = await app.request('GET', '/api/v1/organization/audit-logs', { token: fx.token, query: { eventType: 'login-user-sso', limit: '1' } });
    expect(audit.body.auditLogs[0].event.metadata).toMatchObject({ result: 'success', orgRole: 'member', removed: [`${fx.projectId}:member`] });
    const carol = await app.database.db.selectFrom('users').select('id').where('email', '=', 'carol@example.com').executeTakeFirst();
    const projectAudit = await app.request('GET', `/api/v1/workspace/${fx.projectId}/audit-logs`, {
      token: fx.token,
      query: { eventType: 'update-user-workspace-role', limit: '2' },
    });
    expect(projectAudit.status).toBe(200);
    expect(
      projectAudit.body.auditLogs.map((log: { event: { metadata: object } }) => log.event.metadata),
      "the project's own log shows what single sign-on granted and took away",
    ).toEqual([
      { userId: carol!.id, grantedBySso: [], removedBySso: ['member'] },
      { userId: carol!.id, grantedBySso: ['member'], removedBySso: [] },
    ]);
  });

  test('roles granted by hand are left alone', async () => {
    provider.accounts.set('dave', { email: 'dave@example.com', emailVerified: true, groups: [] });
    expect((await signIn('dave')).status).toBe(200);
    const added = await app.request('POST', `/api/v2/workspace/${fx.projectId}/memberships`, { token: fx.token, body: { emails: ['dave@example.com'] } });
    expect(added.status, JSON.stringify(added.body)).toBe(200);
    const again = await signIn('dave');
    expect(await projectsOf(again.body.accessToken)).toContain(fx.projectId);
  });
});

describe('first sign-in', () => {
  test('links an invited user by verified e-mail and accepts the invite', async () => {
    const invited = await app.request('POST', '/api/v1/invite-org/signup', {
      token: fx.token,
      body: { inviteeEmails: ['bob@example.com'], organizationId: fx.orgId },
    });
    expect(invited.status).toBe(200);
    provider.accounts.set('bob', { email: 'Bob@Example.com', emailVerified: true, groups: [] });
    const signedIn = await signIn('bob');
    expect(signedIn.status, JSON.stringify(signedIn.body)).toBe(200);
    const users = await app.database.db.selectFrom('users').select('id').where('email', '=', 'bob@example.com').execute();
    expect(users).toHaveLength(1);
    const membership = await app.database.db.selectFrom('orgMemberships').selectAll().where('userId', '=', users[0]!.id).executeTakeFirstOrThrow();
    expect(membership.status).toBe('accepted');
  });
});

// Any organization's admin chooses its own identity provider, which can claim any address of a domain it allows:
// found by a hostile review, an admin of another organization signed in as this organization's admin and switched
// into it. Its provider's word must never reach an account made elsewhere, nor reach past its own organization.
describe("another organization's provider", () => {
  const PASSWORD = 'correct horse battery';
  let evil: Awaited<ReturnType<typeof otherOrganization>>;
  beforeAll(async () => {
    evil = await otherOrganization(app, 'evil-sso');
    const configured = await app.request('POST', '/api/v1/sso/oidc/config', {
      token: evil.token,
      body: { orgSlug: 'evil-sso', discoveryURL: provider.issuer, clientId: provider.clientId, clientSecret: provider.clientSecret, allowedEmailDomains: 'example.com' },
    });
    expect(configured.status, JSON.stringify(configured.body)).toBe(200);
    provider.accounts.set('victim', { email: 'admin@example.com', emailVerified: true, groups: [] });
  });
  const adminUserId = async () => (await app.database.db.selectFrom('users').select('id').where('email', '=', 'admin@example.com').executeTakeFirstOrThrow()).id;

  test('cannot sign in as an account made elsewhere (a password, another organization): 403 SsoAccountExists, no session, no membership', async () => {
    const before = (await sessionsOf('admin@example.com')).length;
    const refused = await signIn('victim', undefined, 'evil-sso');
    expect(refused.status, JSON.stringify(refused.body)).toBe(403);
    expect(refused.body).toMatchObject({ statusCode: 403, code: 'SsoAccountExists' });
    expect((await sessionsOf('admin@example.com')).length).toBe(before);
    const memberships = await app.database.db
      .selectFrom('orgMemberships')
      .select('orgId')
      .where('userId', '=', await adminUserId())
      .execute();
    expect(memberships.map((row) => row.orgId)).toEqual([fx.orgId]);
  });

  test('a session it opens for a member of both acts in its organization only: no switch, no account-wide sessions or second factor, no other organization named', async () => {
    const userId = await adminUserId();
    await addUserToOrg(app.database.db, { orgId: evil.orgId, userId, role: 'member', status: 'accepted', inviteEmail: null });
    const home = await app.request('POST', '/api/v1/auth/login', { body: { email: 'admin@example.com', password: PASSWORD, organizationId: fx.orgId } });
    expect(home.status, JSON.stringify(home.body)).toBe(200);
    const signedIn = await signIn('victim', undefined, 'evil-sso');
    expect(signedIn.status, JSON.stringify(signedIn.body)).toBe(200);
    const sso = signedIn.body.accessToken as string;

    for (const [method, url, body] of [
      ['PUT', '/api/v1/console/session/organization', { organizationId: fx.orgId }],
      ['POST', '/api/v3/auth/select-organization', { organizationId: fx.orgId }],
      ['POST', '/api/v1/auth/mfa/totp', undefined],
      ['GET', '/api/v1/organization', undefined],
    ] as const) {
      const refused = await app.request(method, url, { token: sso, body, headers: { 'x-coffer-console': '1' } });
      expect(refused.status, `${method} ${url} ${JSON.stringify(refused.body)}`).toBe(403);
      expect(refused.body).toMatchObject({ code: 'AccountSignInRequired' });
    }
    const session = await app.request('GET', '/api/v1/console/session', { token: sso, headers: { 'x-coffer-console': '1' } });
    expect(session.body.organizations.map((org: { id: string }) => org.id)).toEqual([evil.orgId]);
    const listed = await app.request('GET', '/api/v1/auth/sessions', { token: sso });
    expect(listed.body.sessions.map((row: { organizationId: string }) => row.organizationId)).toEqual([evil.orgId]);
    expect((await app.request('DELETE', '/api/v1/auth/sessions', { token: sso })).status).toBe(200);
    // the password session in the home organization was out of its reach
    expect((await app.request('GET', '/api/v1/workspace', { token: home.body.token ?? home.body.accessToken })).status).toBe(200);
    // the password session reaches every organization of the account
    const everywhere = await app.request('GET', '/api/v1/auth/sessions', { token: home.body.token ?? home.body.accessToken });
    expect(everywhere.status).toBe(200);
  });
});

describe('the configuration', () => {
  test('is answered without its client secret, which is stored sealed', async () => {
    const got = await app.request('GET', '/api/v1/sso/oidc/config', { token: fx.token, query: { orgSlug } });
    expect(got.status).toBe(200);
    expect(got.body).toMatchObject({ discoveryURL: provider.issuer, clientId: provider.clientId, allowedEmailDomains: 'example.com', callbackURL: CALLBACK });
    expect(JSON.stringify(got.body)).not.toContain(provider.clientSecret);
    const row = await app.database.db.selectFrom('orgOidcConfigs').selectAll().executeTakeFirstOrThrow();
    expect(row.encryptedClientSecret.toString('latin1')).not.toContain(provider.clientSecret);
  });

  test('a second one answers 409, a foreign project in a mapping 400, bad domains 422; nothing changes', async () => {
    const base = { orgSlug, discoveryURL: provider.issuer, clientId: 'x', clientSecret: 'y', allowedEmailDomains: 'example.com' };
    expect((await app.request('POST', '/api/v1/sso/oidc/config', { token: fx.token, body: base })).body.code).toBe('SsoConfigExists');
    const foreign = await app.request('PATCH', '/api/v1/sso/oidc/config', {
      token: fx.token,
      body: { orgSlug, groupMappings: [{ group: 'g', projectId: '00000000-0000-4000-8000-000000000000', projectRole: 'admin' }] },
    });
    expect(foreign.status).toBe(400);
    expect(foreign.body.code).toBe('InvalidGroupMapping');
    const badDomain = await app.request('PATCH', '/api/v1/sso/oidc/config', { token: fx.token, body: { orgSlug, allowedEmailDomains: 'not a domain' } });
    expect(badDomain.status).toBe(422);
    const got = await app.request('GET', '/api/v1/sso/oidc/config', { token: fx.token, query: { orgSlug } });
    expect(got.body.allowedEmailDomains).toBe('example.com');
  });

  test('a member may not read or change it', async () => {
    const member = await fx.identity('sso-member', 'member');
    expect((await app.request('PATCH', '/api/v1/sso/oidc/config', { token: member.token, body: { orgSlug, isActive: false } })).status).toBe(403);
  });
});
