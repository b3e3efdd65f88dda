import * as OTPAuth from 'otpauth';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { bootstrap, snapshotDatabase, startReplica, startSibling, startTestApp, TEST_LOGIN_LIMITS, type TestApp } from '../support/test-app.ts';
import { otherOrganization } from '../support/access-fixture.ts';
import { addUserToOrg } from '../../src/orgs/org-membership-service.ts';

// TOTP (RFC 6238) for password users, with the server's clock injected; recovery codes; the organization's MFA
// requirement; sessions listed and revoked, the revocation seen by a second server on the same database.

let now = Date.parse('2026-03-01T12:00:00Z');
const STEP_MS = 30_000;

let app: TestApp;
let other: TestApp;
let admin: Awaited<ReturnType<typeof bootstrap>>;
const ADMIN = { email: 'admin@example.com', password: 'correct horse battery' };

beforeAll(async () => {
  app = await startTestApp({ loginLimits: { ...TEST_LOGIN_LIMITS, maxFailures: 5 }, signIn: { clock: () => now } });
  admin = await bootstrap(app);
  other = app.backend === 'postgres' ? await startReplica(app) : await startSibling(app, app.keys);
});
afterAll(async () => {
  await other?.close();
  await app?.close();
});

const codeAt = (secret: string, at: number) =>
  new OTPAuth.TOTP({ secret: OTPAuth.Secret.fromBase32(secret), algorithm: 'SHA1', digits: 6, period: 30 }).generate({ timestamp: at });

async function invitedUser(email: string, password: string) {
  const invited = await app.request('POST', '/api/v1/invite-org/signup', { token: admin.token, body: { inviteeEmails: [email], organizationId: admin.orgId } });
  const accepted = await app.request('POST', '/api/v1/invite-org/accept', {
    body: { email, organizationId: admin.orgId, inviteToken: invited.body.invites[0].inviteToken, password },
  });
  expect(accepted.status).toBe(200);
  return { email, password, id: accepted.body.user.id as string };
}

/** Enrols TOTP for the holder of `token` (a login token or a session); answers the secret and recovery codes. */
async function enrol(token: string) {
  const started = await app.request('POST', '/api/v1/auth/mfa/totp', { token });
  expect(started.status, JSON.stringify(started.body)).toBe(200);
  expect(started.body.otpauthUrl).toMatch(/^otpauth:\/\/totp\//);
  const wrong = await app.request('POST', '/api/v1/auth/mfa/totp/confirm', { token, body: { code: codeAt(started.body.secret, now - 10 * STEP_MS) } });
  expect(wrong.status).toBe(400);
  expect(wrong.body.code).toBe('InvalidMfaCode');
  const confirmed = await app.request('POST', '/api/v1/auth/mfa/totp/confirm', { token, body: { code: codeAt(started.body.secret, now) } });
  expect(confirmed.status, JSON.stringify(confirmed.body)).toBe(200);
  expect(confirmed.body.recoveryCodes).toHaveLength(10);
  return { secret: started.body.secret as string, recoveryCodes: confirmed.body.recoveryCodes as string[] };
}

const login = (body: Record<string, unknown>, headers?: Record<string, string>) => app.request('POST', '/api/v1/auth/login', { body, headers });

describe('TOTP for a password user', () => {
  let secret: string;
  let recoveryCodes: string[];

  beforeAll(async () => {
    const loginToken = await app.request('POST', '/api/v3/auth/login', { body: ADMIN });
    ({ secret, recoveryCodes } = await enrol(loginToken.body.accessToken));
  });

  test('sign-in needs a code once enrolled: none → 403 MfaRequired, a current one → 200, the same again → 401', async () => {
    const missing = await login(ADMIN);
    expect(missing.status).toBe(403);
    expect(missing.body.code).toBe('MfaRequired');
    now += STEP_MS;
    const code = codeAt(secret, now);
    const signedIn = await login({ ...ADMIN, totpCode: code });
    expect(signedIn.status, JSON.stringify(signedIn.body)).toBe(200);
    const replayed = await login({ ...ADMIN, totpCode: code });
    expect(replayed.status).toBe(401);
    expect(replayed.body.code).toBe('InvalidMfaCode');
  });

  test('a code of five minutes ago is refused; with the clock a step on, the next code works', async () => {
    expect((await login({ ...ADMIN, totpCode: codeAt(secret, now - 10 * STEP_MS) })).status).toBe(401);
    now += STEP_MS;
    expect((await login({ ...ADMIN, totpCode: codeAt(secret, now) })).status).toBe(200);
  });

  test('the two-step sign-in asks for the code before its login token', async () => {
    expect((await app.request('POST', '/api/v3/auth/login', { body: ADMIN })).body.code).toBe('MfaRequired');
    now += STEP_MS;
    expect((await app.request('POST', '/api/v3/auth/login', { body: { ...ADMIN, totpCode: codeAt(secret, now) } })).status).toBe(200);
  });

  test('a recovery code works once', async () => {
    expect((await login({ ...ADMIN, recoveryCode: recoveryCodes[0] })).status).toBe(200);
    const again = await login({ ...ADMIN, recoveryCode: recoveryCodes[0] });
    expect(again.status).toBe(401);
    const status = await app.request('GET', '/api/v1/auth/mfa', { token: (await login({ ...ADMIN, recoveryCode: recoveryCodes[1] })).body.accessToken });
    expect(status.body).toEqual({ totpEnabled: true, recoveryCodesLeft: 8 });
  });

  test('enrolling again answers 409; the secret and codes appear in no audit entry or log', async () => {
    const session = (await login({ ...ADMIN, recoveryCode: recoveryCodes[2] })).body.accessToken;
    expect((await app.request('POST', '/api/v1/auth/mfa/totp', { token: session })).status).toBe(409);
    const audit = JSON.stringify(await app.database.db.selectFrom('auditLogs').select(['eventType', 'eventMetadata', 'actorMetadata']).execute());
    for (const value of [secret, ...recoveryCodes]) {
      expect(audit).not.toContain(value);
      expect(app.logs.some((line) => line.includes(value))).toBe(false);
    }
    expect(audit).toContain('enrol-mfa-totp');
  });

  test('wrong codes are throttled like passwords: after 5, the right code is refused with 429 from this address', async () => {
    const user = await invitedUser('throttled@example.com', 'throttled password');
    const token = (await app.request('POST', '/api/v3/auth/login', { body: user })).body.accessToken;
    const { secret: own } = await enrol(token);
    now += STEP_MS;
    for (let attempt = 0; attempt < 5; attempt++) expect((await login({ ...user, totpCode: '000000' })).status).toBe(401);
    const locked = await login({ ...user, totpCode: codeAt(own, now) });
    expect(locked.status).toBe(429);
    expect(locked.headers['retry-after']).toBeDefined();
  });

  test('an org admin resets a member’s enrolment (audited); the member then signs in with the password alone', async () => {
    const user = await invitedUser('lost-phone@example.com', 'lost phone password');
    await enrol((await app.request('POST', '/api/v3/auth/login', { body: user })).body.accessToken);
    expect((await login(user)).body.code).toBe('MfaRequired');
    const reset = await app.request('DELETE', `/api/v1/organization/${admin.orgId}/users/${user.id}/mfa`, { token: admin.token });
    expect(reset.status).toBe(200);
    expect(reset.body.reset).toBe(true);
    expect((await login(user)).status).toBe(200);
    const audit = await app.request('GET', '/api/v1/organization/audit-logs', { token: admin.token, query: { eventType: 'reset-user-mfa' } });
    expect(audit.body.auditLogs[0].event.metadata).toEqual({ userId: user.id });
  });

  // found by a hostile review: the second factor protects the account in every organization it belongs to
  test("another organization's admin cannot reset the second factor of an account that also belongs elsewhere: 403, enrolment kept", async () => {
    const user = await invitedUser('two-orgs@example.com', 'two orgs password');
    await enrol((await app.request('POST', '/api/v3/auth/login', { body: user })).body.accessToken);
    const elsewhere = await otherOrganization(app, 'mfa-elsewhere');
    await addUserToOrg(app.database.db, { orgId: elsewhere.orgId, userId: user.id, role: 'member', status: 'accepted', inviteEmail: null });
    for (const [orgId, token] of [
      [elsewhere.orgId, elsewhere.token],
      [admin.orgId, admin.token],
    ]) {
      const refused = await app.request('DELETE', `/api/v1/organization/${orgId}/users/${user.id}/mfa`, { token });
      expect(refused.status, JSON.stringify(refused.body)).toBe(403);
      expect(refused.body).toMatchObject({ code: 'MemberOfOtherOrganizations' });
    }
    expect((await login({ ...user, organizationId: admin.orgId })).body.code).toBe('MfaRequired');
  });
});

describe('an organization that requires MFA', () => {
  test('a password user without a second factor enrols with a login token first', async () => {
    const user = await invitedUser('required@example.com', 'required password');
    expect((await app.request('PATCH', `/api/v1/organization/${admin.orgId}`, { token: admin.token, body: { enforceMfa: true } })).status).toBe(200);
    try {
      const refused = await login(user);
      expect(refused.status).toBe(403);
      expect(refused.body.code).toBe('MfaEnrollmentRequired');
      const loginToken = (await app.request('POST', '/api/v3/auth/login', { body: user })).body.accessToken;
      const chosen = await app.request('POST', '/api/v3/auth/select-organization', { token: loginToken, body: { organizationId: admin.orgId } });
      expect(chosen.body.code).toBe('MfaEnrollmentRequired');
      const { secret } = await enrol(loginToken);
      now += STEP_MS;
      expect((await login({ ...user, totpCode: codeAt(secret, now) })).status).toBe(200);
    } finally {
      await app.request('PATCH', `/api/v1/organization/${admin.orgId}`, { token: admin.token, body: { enforceMfa: false } });
    }
  });
});

describe('sessions', () => {
  let user: Awaited<ReturnType<typeof invitedUser>>;
  const signIn = async (agent: string) => {
    const response = await login(user, { 'user-agent': agent });
    expect(response.status).toBe(200);
    return response.body.accessToken as string;
  };
  const works = (target: TestApp, token: string) => target.request('GET', '/api/v1/workspace', { token }).then((response) => response.status);

  beforeAll(async () => {
    user = await invitedUser('sessions@example.com', 'sessions password');
  });

  test('a user lists their sessions with device, address and last use', async () => {
    const token = await signIn('laptop-browser/1.0');
    await signIn('phone-app/2.0');
    const listed = await app.request('GET', '/api/v1/auth/sessions', { token });
    expect(listed.status).toBe(200);
    const mine = listed.body.sessions.find((session: { current: boolean }) => session.current);
    expect(mine).toMatchObject({ userAgent: 'laptop-browser/1.0', ip: '127.0.0.1', authMethod: 'email', organizationId: admin.orgId });
    expect(listed.body.sessions.map((session: { userAgent: string }) => session.userAgent)).toContain('phone-app/2.0');
  });

  test('revoking one session: refused on its next request by both servers; the others keep working', async () => {
    const kept = await signIn('kept');
    const doomed = await signIn('doomed');
    expect(await works(app, doomed)).toBe(200);
    expect(await works(other, doomed)).toBe(200);
    const id = (await app.request('GET', '/api/v1/auth/sessions', { token: doomed })).body.sessions.find((session: { current: boolean }) => session.current).id;
    expect((await app.request('DELETE', `/api/v1/auth/sessions/${id}`, { token: kept })).status).toBe(200);
    expect(await works(other, doomed)).toBe(401);
    expect(await works(app, doomed)).toBe(401);
    expect(await works(other, kept)).toBe(200);
  });

  test("another user's session answers 404 and stays", async () => {
    const mine = await signIn('mine');
    const sessions = await app.database.db.selectFrom('userSessions').select(['id', 'userId']).where('userId', '<>', user.id).where('isRevoked', '=', false).execute();
    const foreign = sessions[0]!.id;
    const refused = await app.request('DELETE', `/api/v1/auth/sessions/${foreign}`, { token: mine });
    expect(refused.status).toBe(404);
    expect(refused.body.code).toBe('SessionNotFound');
    expect((await app.database.db.selectFrom('userSessions').select('isRevoked').where('id', '=', foreign).executeTakeFirstOrThrow()).isRevoked).toBe(false);
  });

  test('revoking all but the current one', async () => {
    const current = await signIn('current');
    const elsewhere = await signIn('elsewhere');
    const revoked = await app.request('DELETE', '/api/v1/auth/sessions', { token: current, query: { keepCurrent: 'true' } });
    expect(revoked.status).toBe(200);
    expect(revoked.body.revoked).toBeGreaterThan(0);
    expect(await works(other, elsewhere)).toBe(401);
    expect(await works(other, current)).toBe(200);
  });

  test("an org admin revokes a member's sessions: refused on the next request by both servers, audited", async () => {
    const token = await signIn('to-be-revoked');
    expect(await works(other, token)).toBe(200);
    const revoked = await app.request('DELETE', `/api/v1/organization/${admin.orgId}/users/${user.id}/sessions`, { token: admin.token });
    expect(revoked.status).toBe(200);
    expect(await works(other, token)).toBe(401);
    expect(await works(app, token)).toBe(401);
    const audit = await app.request('GET', '/api/v1/organization/audit-logs', { token: admin.token, query: { eventType: 'revoke-user-session' } });
    expect(audit.body.auditLogs[0].event.metadata).toMatchObject({ userId: user.id, byAdmin: true });
  });

  test.each(['sessions', 'mfa'])('a member id that is no user id: DELETE …/users/{userId}/%s answers 404, nothing changed', async (what) => {
    const before = await snapshotDatabase(app.database);
    const response = await app.request('DELETE', `/api/v1/organization/${admin.orgId}/users/not-a-user-id/${what}`, { token: admin.token });
    expect(response.status).toBe(404);
    expect(response.body).toMatchObject({ statusCode: 404, message: 'User not found in this organization' });
    expect(await snapshotDatabase(app.database)).toEqual(before);
  });

  test('an identity has no sessions: 403 NotAUser', async () => {
    const listed = await app.request('GET', '/api/v1/auth/sessions', { token: admin.token });
    expect(listed.status).toBe(403);
    expect(listed.body.code).toBe('NotAUser');
  });
});
