import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { DEFAULT_LOGIN_LIMITS } from '../../src/auth/login-throttle.ts';
import { type AccessFixture, accessFixture, inject } from '../support/access-fixture.ts';
import { snapshotDatabase, startReplica, startTestApp, type TestApp } from '../support/test-app.ts';

/**
 * Brute-force protection with the shipped limits (5 failures per credential,
 * 30 per address, 15 min window, 1 min first lockout doubling up to 1 h):
 * universal-auth login, user login and invite acceptance.
 */
let app: TestApp;
let fx: AccessFixture;
let address = 0;
/** Each test its own source address, so address counts of one test do not lock another. */
const nextAddress = () => `10.0.${Math.floor(++address / 250)}.${address % 250}`;

beforeAll(async () => {
  app = await startTestApp({ loginLimits: DEFAULT_LOGIN_LIMITS });
  fx = await accessFixture(app);
});
afterAll(async () => app?.close());

async function uaIdentity(name: string) {
  const identity = await fx.identity(name, 'member');
  return fx.universalAuth(identity.id);
}

const uaLogin = (clientId: string, clientSecret: string, remoteAddress: string) =>
  app.app.inject({ method: 'POST', url: '/api/v1/auth/universal-auth/login', payload: { clientId, clientSecret }, remoteAddress });

function expectLockedOut(response: { statusCode: number; headers: Record<string, unknown>; body: string }, what: RegExp) {
  expect(response.statusCode).toBe(429);
  const body = JSON.parse(response.body);
  expect(body).toEqual({ statusCode: 429, error: 'RateLimitExceeded', code: 'RateLimitExceeded', message: expect.stringMatching(what), reqId: expect.any(String) });
  const retryAfter = Number(response.headers['retry-after']);
  expect(retryAfter).toBeGreaterThan(0);
  expect(retryAfter).toBeLessThanOrEqual(DEFAULT_LOGIN_LIMITS.maxLockoutMs / 1000);
  return retryAfter;
}

const wrongSecret = 'f'.repeat(64);

describe('universal-auth login', () => {
  test('400 wrong client secrets at once: the lockout begins; the right secret right after gets 429 and no token', async () => {
    const { clientId, clientSecret, clientSecretId } = await uaIdentity('brute-forced');
    const from = nextAddress();
    const answers = await Promise.all(Array.from({ length: 400 }, () => uaLogin(clientId, wrongSecret, from)));
    const statuses = answers.map((answer) => answer.statusCode);
    expect(statuses.every((status) => status === 401 || status === 429)).toBe(true);
    // attempts on one client id are decided one at a time: exactly the limit get through to a 401
    expect(statuses.filter((status) => status === 401).length).toBe(DEFAULT_LOGIN_LIMITS.maxFailures);
    expect(statuses.filter((status) => status === 429).length).toBe(400 - DEFAULT_LOGIN_LIMITS.maxFailures);

    const tokensBefore = await app.database.db.selectFrom('identityAccessTokens').select('id').execute();
    const right = await uaLogin(clientId, clientSecret, from);
    expectLockedOut(right, /^Too many failed logins for this client id; try again in \d+ seconds$/);
    // also from another address: the client id itself is locked
    expectLockedOut(await uaLogin(clientId, clientSecret, nextAddress()), /for this client id/);
    expect(await app.database.db.selectFrom('identityAccessTokens').select('id').execute()).toEqual(tokensBefore);
    const secret = await app.database.db.selectFrom('identityUaClientSecrets').select('clientSecretNumUses').where('id', '=', clientSecretId).executeTakeFirstOrThrow();
    expect(secret.clientSecretNumUses).toBe(0);
  });

  test('one at a time: exactly the limit of 401s, then 429s; nothing is verified while locked out', async () => {
    const { clientId } = await uaIdentity('one-at-a-time');
    const from = nextAddress();
    const statuses = [];
    for (let attempt = 0; attempt < 12; attempt++) statuses.push((await uaLogin(clientId, wrongSecret, from)).statusCode);
    expect(statuses).toEqual([...Array(5).fill(401), ...Array(7).fill(429)]);
  });

  test('a success clears the client id’s count', async () => {
    const { clientId, clientSecret } = await uaIdentity('clears');
    const from = nextAddress();
    for (let attempt = 0; attempt < 4; attempt++) expect((await uaLogin(clientId, wrongSecret, from)).statusCode).toBe(401);
    expect((await uaLogin(clientId, clientSecret, from)).statusCode).toBe(200);
    for (let attempt = 0; attempt < 4; attempt++) expect((await uaLogin(clientId, wrongSecret, from)).statusCode).toBe(401);
    expect((await uaLogin(clientId, clientSecret, from)).statusCode).toBe(200);
  });

  test('a lockout is audited once (actor unknownUser, no secret), and the next lockout lasts twice as long', async () => {
    const { clientId, clientSecret } = await uaIdentity('audited-lockout');
    const from = nextAddress();
    for (let attempt = 0; attempt < 5; attempt++) await uaLogin(clientId, wrongSecret, from);
    const first = expectLockedOut(await uaLogin(clientId, clientSecret, from), /for this client id/);
    expect(first).toBeLessThanOrEqual(60);

    const audit = await app.request('GET', '/api/v1/organization/audit-logs', {
      token: fx.token,
      query: { eventType: 'login-lockout', eventMetadata: `clientId=${clientId}` },
    });
    expect(audit.body.auditLogs).toHaveLength(1);
    expect(audit.body.auditLogs[0]).toMatchObject({
      actor: { type: 'unknownUser', metadata: {} },
      ipAddress: from,
      event: { type: 'login-lockout', metadata: { method: 'universal-auth', scope: 'credential', clientId, failures: 5, lockouts: 1, lockoutSeconds: 60 } },
    });
    expect(JSON.stringify(audit.body)).not.toContain(wrongSecret);
    expect(JSON.stringify(audit.body)).not.toContain(clientSecret);

    // the lockout runs out (its end moved into the past); five more failures lock it for 120 s
    await app.database.db
      .updateTable('loginThrottles')
      .set({ lockedUntil: new Date(Date.now() - 1000) })
      .where('lockedUntil', '>', new Date())
      .execute();
    for (let attempt = 0; attempt < 5; attempt++) expect((await uaLogin(clientId, wrongSecret, from)).statusCode).toBe(401);
    const second = expectLockedOut(await uaLogin(clientId, clientSecret, from), /for this client id/);
    expect(second).toBeGreaterThan(60);
    expect(second).toBeLessThanOrEqual(120);
  });

  test('failures from one address across many client ids lock the address, not the others', async () => {
    const { clientId, clientSecret } = await uaIdentity('innocent');
    const attacker = nextAddress();
    for (let attempt = 0; attempt < DEFAULT_LOGIN_LIMITS.addressMaxFailures; attempt++) {
      expect((await uaLogin(`00000000-0000-4000-8000-${String(attempt).padStart(12, '0')}`, wrongSecret, attacker)).statusCode).toBe(401);
    }
    expectLockedOut(await uaLogin(clientId, clientSecret, attacker), /^Too many failed logins from this address; try again in \d+ seconds$/);
    expect((await uaLogin(clientId, clientSecret, nextAddress())).statusCode).toBe(200);
    const audit = await app.request('GET', '/api/v1/organization/audit-logs', { token: fx.token, query: { eventType: 'login-lockout', eventMetadata: `scope=address` } });
    expect(audit.body.auditLogs.map((entry: { event: { metadata: { address: string } } }) => entry.event.metadata.address)).toContain(attacker);
  });

  test('IPv6 addresses are counted by their /64', async () => {
    for (let attempt = 0; attempt < DEFAULT_LOGIN_LIMITS.addressMaxFailures; attempt++) {
      await uaLogin(`00000000-0000-4000-8000-${String(attempt).padStart(12, '1')}`, wrongSecret, `2001:db8:aa:bb::${attempt.toString(16)}`);
    }
    const { clientId, clientSecret } = await uaIdentity('v6-neighbour');
    expectLockedOut(await uaLogin(clientId, clientSecret, '2001:db8:aa:bb:ffff::1'), /from this address/);
    expect((await uaLogin(clientId, clientSecret, '2001:db8:aa:cc::1')).statusCode).toBe(200);
  });

  test('bad input (422) and a refused address (403) are not counted as guesses', async () => {
    const { clientId, clientSecret } = await uaIdentity('not-guesses');
    const from = nextAddress();
    for (let attempt = 0; attempt < 10; attempt++) {
      const response = await app.app.inject({ method: 'POST', url: '/api/v1/auth/universal-auth/login', payload: { clientId }, remoteAddress: from });
      expect(response.statusCode).toBe(422);
    }
    expect((await uaLogin(clientId, clientSecret, from)).statusCode).toBe(200);
  });
});

describe('user login and invite acceptance', () => {
  test('20 wrong passwords: 5 × 401, then 429; the right password also 429', async () => {
    const from = nextAddress();
    const login = (password: string) => inject(app, 'POST', '/api/v1/auth/login', { body: { email: 'admin@example.com', password }, remoteAddress: from });
    const statuses = [];
    for (let attempt = 0; attempt < 20; attempt++) statuses.push((await login(`wrong password ${attempt}`)).status);
    expect(statuses).toEqual([...Array(5).fill(401), ...Array(15).fill(429)]);
    const right = await login('correct horse battery');
    expect(right.status).toBe(429);
    expect(right.body).toMatchObject({ statusCode: 429, error: 'RateLimitExceeded', message: expect.stringContaining('for this email') });
    // the email is the credential, whatever its case
    expect(
      (await inject(app, 'POST', '/api/v1/auth/login', { body: { email: 'ADMIN@example.com', password: 'correct horse battery' }, remoteAddress: nextAddress() })).status,
    ).toBe(429);
  });

  test('wrong invite tokens for an email lock it; the right token is then refused and the invite stays open', async () => {
    const email = 'invited@example.com';
    const [{ inviteToken }] = (await fx.call('POST', '/api/v1/invite-org/signup', { inviteeEmails: [email], organizationId: fx.orgId })).invites;
    const from = nextAddress();
    const accept = (token: string) =>
      inject(app, 'POST', '/api/v1/invite-org/accept', {
        body: { email, organizationId: fx.orgId, inviteToken: token, password: 'invited password' },
        remoteAddress: from,
      });
    for (let attempt = 0; attempt < 5; attempt++) expect((await accept(`${'0'.repeat(63)}${attempt}`)).status).toBe(401);
    const before = await snapshotDatabase(app.database);
    expect((await accept(inviteToken)).status).toBe(429);
    expect(await snapshotDatabase(app.database)).toEqual(before);
  });
});

describe('replicas share the counts', () => {
  test('failures on two replicas add up; both refuse once locked', async () => {
    if (app.backend === 'pglite') return; // one process owns an embedded database
    const replica = await startReplica(app);
    try {
      const { clientId, clientSecret } = await uaIdentity('two-replicas');
      const from = nextAddress();
      const onReplica = (clientSecretValue: string) =>
        replica.app.inject({ method: 'POST', url: '/api/v1/auth/universal-auth/login', payload: { clientId, clientSecret: clientSecretValue }, remoteAddress: from });
      for (let attempt = 0; attempt < 3; attempt++) expect((await uaLogin(clientId, wrongSecret, from)).statusCode).toBe(401);
      for (let attempt = 0; attempt < 2; attempt++) expect((await onReplica(wrongSecret)).statusCode).toBe(401);
      expectLockedOut(await onReplica(clientSecret), /for this client id/);
      expectLockedOut(await uaLogin(clientId, clientSecret, from), /for this client id/);
    } finally {
      await replica.close();
    }
  });
});
