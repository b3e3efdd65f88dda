import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { bootstrap, startTestApp, type TestApp } from '../support/test-app.ts';
import { startOidcProvider, type TestOidcProvider } from '../support/oidc-provider.ts';

// Enforced single sign-on: an organization's members stop signing in (and setting passwords) with a password;
// with COFFER_SSO_BREAK_GLASS, its admins keep a password sign-in, audited.

const CALLBACK = 'http://127.0.0.1:8080/api/v1/sso/oidc/callback';
const ADMIN = { email: 'admin@example.com', password: 'correct horse battery' };
const MEMBER = { email: 'member@example.com', password: 'member password 1' };

/** An instance with an admin, a password member and an OIDC configuration for `issuer`. */
async function setUp(app: TestApp, issuer: string, clientSecret = 'secret') {
  const admin = await bootstrap(app);
  const orgSlug = (await app.database.db.selectFrom('organizations').select('slug').executeTakeFirstOrThrow()).slug;
  const invited = await app.request('POST', '/api/v1/invite-org/signup', { token: admin.token, body: { inviteeEmails: [MEMBER.email], organizationId: admin.orgId } });
  const accepted = await app.request('POST', '/api/v1/invite-org/accept', {
    body: { email: MEMBER.email, organizationId: admin.orgId, inviteToken: invited.body.invites[0].inviteToken, password: MEMBER.password },
  });
  expect(accepted.status).toBe(200);
  const enforceEarly = await app.request('PATCH', `/api/v1/organization/${admin.orgId}`, { token: admin.token, body: { authEnforced: true } });
  expect(enforceEarly.status).toBe(400);
  expect(enforceEarly.body.code).toBe('SsoNotConfigured');
  const configured = await app.request('POST', '/api/v1/sso/oidc/config', {
    token: admin.token,
    body: { orgSlug, discoveryURL: issuer, clientId: 'coffer-test-client', clientSecret, allowedEmailDomains: 'example.com' },
  });
  expect(configured.status).toBe(200);
  return { ...admin, orgSlug };
}

const passwordLogin = (app: TestApp, who: { email: string; password: string }) => app.request('POST', '/api/v1/auth/login', { body: who });

describe('an organization that enforces single sign-on', () => {
  let app: TestApp;
  let provider: TestOidcProvider;
  let admin: Awaited<ReturnType<typeof setUp>>;

  beforeAll(async () => {
    provider = await startOidcProvider([CALLBACK]);
    app = await startTestApp();
    admin = await setUp(app, provider.issuer, provider.clientSecret);
    expect((await passwordLogin(app, MEMBER)).status).toBe(200);
    const enforced = await app.request('PATCH', `/api/v1/organization/${admin.orgId}`, { token: admin.token, body: { authEnforced: true } });
    expect(enforced.status).toBe(200);
    expect(enforced.body.organization).toMatchObject({ authEnforced: true, enforceMfa: false });
  });
  afterAll(async () => {
    await app?.close();
    await provider?.close();
  });

  test('refuses password sign-in of members and admins with 403 SsoEnforced', async () => {
    for (const who of [MEMBER, ADMIN]) {
      const refused = await passwordLogin(app, who);
      expect(refused.status).toBe(403);
      expect(refused.body).toMatchObject({ code: 'SsoEnforced', message: expect.stringContaining(`orgSlug=${admin.orgSlug}`) });
    }
  });

  test('refuses the two-step password sign-in when it chooses the organization', async () => {
    const loginToken = await app.request('POST', '/api/v3/auth/login', { body: MEMBER });
    expect(loginToken.status).toBe(200);
    const chosen = await app.request('POST', '/api/v3/auth/select-organization', { token: loginToken.body.accessToken, body: { organizationId: admin.orgId } });
    expect(chosen.status).toBe(403);
    expect(chosen.body.code).toBe('SsoEnforced');
  });

  test('refuses setting a password through an invite; signing in through the provider accepts the invite instead', async () => {
    const invited = await app.request('POST', '/api/v1/invite-org/signup', {
      token: admin.token,
      body: { inviteeEmails: ['new@example.com'], organizationId: admin.orgId },
    });
    const body = { email: 'new@example.com', organizationId: admin.orgId, inviteToken: invited.body.invites[0].inviteToken, password: 'a new password' };
    const refused = await app.request('POST', '/api/v1/invite-org/accept', { body });
    expect(refused.status).toBe(403);
    expect(refused.body.code).toBe('SsoEnforced');
    const user = await app.database.db.selectFrom('users').select('passwordHash').where('email', '=', 'new@example.com').executeTakeFirstOrThrow();
    expect(user.passwordHash).toBeNull();

    provider.accounts.set('new', { email: 'new@example.com', emailVerified: true, groups: [] });
    provider.signInAs('new');
    const started = await app.request('GET', '/api/v1/sso/oidc/login', { query: { orgSlug: admin.orgSlug } });
    const callback = await provider.authorize(String(started.headers.location), CALLBACK);
    const signedIn = await app.request('GET', `/api/v1/sso/oidc/callback${callback.search}`);
    expect(signedIn.status, JSON.stringify(signedIn.body)).toBe(200);
  });

  test('turning the configuration off stops enforcing it', async () => {
    const off = await app.request('PATCH', '/api/v1/sso/oidc/config', { token: admin.token, body: { orgSlug: admin.orgSlug, isActive: false } });
    expect(off.status).toBe(200);
    expect((await passwordLogin(app, MEMBER)).status).toBe(200);
  });
});

describe('break-glass (COFFER_SSO_BREAK_GLASS)', () => {
  let app: TestApp;
  let admin: Awaited<ReturnType<typeof setUp>>;

  beforeAll(async () => {
    app = await startTestApp({ signIn: { ssoBreakGlass: true } });
    // nothing is fetched from the issuer until a sign-in starts
    admin = await setUp(app, 'https://issuer.example.com');
    expect((await app.request('PATCH', `/api/v1/organization/${admin.orgId}`, { token: admin.token, body: { authEnforced: true } })).status).toBe(200);
  });
  afterAll(async () => app?.close());

  test('an org admin signs in with a password, audited as break-glass; a member is still refused', async () => {
    const signedIn = await passwordLogin(app, ADMIN);
    expect(signedIn.status).toBe(200);
    const audit = await app.request('GET', '/api/v1/organization/audit-logs', { token: signedIn.body.accessToken, query: { eventType: 'login-user' } });
    expect(audit.body.auditLogs[0].event.metadata).toMatchObject({ method: 'password', result: 'success', breakGlass: true });
    expect(app.logs.some((line) => line.includes('break-glass password sign-in'))).toBe(true);
    const member = await passwordLogin(app, MEMBER);
    expect(member.status).toBe(403);
    expect(member.body.code).toBe('SsoEnforced');
  });
});
