import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { DEFAULT_LOGIN_LIMITS } from '../../src/auth/login-throttle.ts';
import { type AccessFixture, accessFixture, inject } from '../support/access-fixture.ts';
import { snapshotDatabase, startReplica, startSibling, startTestApp, type TestApp } from '../support/test-app.ts';

/**
 * Brute-force protection with the shipped limits (5 failures per credential and
 * address, 30 per address, 20 per credential before it is guarded, 15 min
 * window, 1 min first lockout doubling up to 1 h): universal-auth login, user
 * login and invite acceptance. What is locked is an address, for one credential
 * or for all; never the credential itself, so its owner logs in from an address
 * that has not been failing while someone else guesses.
 */
let app: TestApp;
let fx: AccessFixture;
let address = 0;
/** A source address no test used before, so the address counts of one test do not lock another. */
const nextAddress = () => `10.0.${Math.floor(++address / 250)}.${address % 250}`;

beforeAll(async () => {
  app = await startTestApp({ loginLimits: DEFAULT_LOGIN_LIMITS });
  fx = await accessFixture(app);
});
afterAll(async () => app?.close());

async function uaIdentity(name: string) {
  const identity = await fx.identity(name, 'member');
  return { ...(await fx.universalAuth(identity.id)), identityId: identity.id };
}

const uaLogin = (clientId: string, clientSecret: string, remoteAddress: string, on: TestApp = app) =>
  on.app.inject({ method: 'POST', url: '/api/v1/auth/universal-auth/login', payload: { clientId, clientSecret }, remoteAddress });

type Answer = { statusCode: number; headers: Record<string, unknown>; body: string };

function expectLockedOut(response: Answer, what: RegExp) {
  expect(response.statusCode).toBe(429);
  const body = JSON.parse(response.body);
  expect(body).toEqual({ statusCode: 429, error: 'RateLimitExceeded', code: 'RateLimitExceeded', message: expect.stringMatching(what), reqId: expect.any(String) });
  const retryAfter = Number(response.headers['retry-after']);
  expect(retryAfter).toBeGreaterThan(0);
  expect(retryAfter).toBeLessThanOrEqual(DEFAULT_LOGIN_LIMITS.maxLockoutMs / 1000);
  return retryAfter;
}

const wrongSecret = 'f'.repeat(64);
const pairLocked = /^Too many failed logins for this client id from this address; try again in \d+ seconds$/;

async function auditEntries(eventType: string, eventMetadata: string) {
  const audit = await app.request('GET', '/api/v1/organization/audit-logs', { token: fx.token, query: { eventType, eventMetadata } });
  expect(audit.status).toBe(200);
  return audit.body.auditLogs as { ipAddress: string; actor: unknown; event: { type: string; metadata: Record<string, unknown> } }[];
}

/** An identity token of a successful universal-auth login, checked against the API. */
async function expectLoggedIn(response: Answer) {
  expect(response.statusCode).toBe(200);
  const { accessToken } = JSON.parse(response.body);
  expect((await app.request('GET', '/api/v1/workspace', { token: accessToken })).status).toBe(200);
}

/**
 * Runs `attack` over and over (attempt n gets n) until `owner` has run `rounds` times; each owner round
 * waits for the attacker's next answer first, so the two really alternate whatever the scheduling.
 */
async function whileAttacked<T>(attack: (n: number) => Promise<number>, rounds: number, owner: (round: number) => Promise<T>) {
  const attackerStatuses: number[] = [];
  let done = false;
  let nextAnswer: (() => void) | undefined;
  const attacker = (async () => {
    for (let n = 0; !done; n++) {
      attackerStatuses.push(await attack(n));
      nextAnswer?.();
    }
  })();
  const owners: T[] = [];
  try {
    for (let round = 0; round < rounds; round++) {
      const before = attackerStatuses.length;
      const answered = new Promise<void>((resolve) => {
        nextAnswer = () => {
          if (attackerStatuses.length > before + 1) resolve();
        };
      });
      await Promise.race([answered, attacker]); // the attacker's loop ends only by failing

      owners.push(await owner(round));
    }
  } finally {
    done = true;
    await attacker;
  }
  return { attackerStatuses, owners };
}

describe('universal-auth login', () => {
  test('400 wrong secrets at once from one address: 5 × 401, then that address is locked out of the client id (the right secret too); another address logs in', async () => {
    const { clientId, clientSecret, clientSecretId } = await uaIdentity('brute-forced');
    const attacker = nextAddress();
    const answers = await Promise.all(Array.from({ length: 400 }, () => uaLogin(clientId, wrongSecret, attacker)));
    const statuses = answers.map((answer) => answer.statusCode);
    // attempts on one client id are decided one at a time: exactly the limit get through to a 401
    expect(statuses.filter((status) => status === 401).length).toBe(DEFAULT_LOGIN_LIMITS.maxFailures);
    expect(statuses.filter((status) => status === 429).length).toBe(400 - DEFAULT_LOGIN_LIMITS.maxFailures);

    // the locked address is refused before anything is checked: the right secret answers the same 429, and no token
    const tokensBefore = await app.database.db.selectFrom('identityAccessTokens').select('id').execute();
    expectLockedOut(await uaLogin(clientId, clientSecret, attacker), pairLocked);
    expect(await app.database.db.selectFrom('identityAccessTokens').select('id').execute()).toEqual(tokensBefore);
    const unused = await app.database.db.selectFrom('identityUaClientSecrets').select('clientSecretNumUses').where('id', '=', clientSecretId).executeTakeFirstOrThrow();
    expect(unused.clientSecretNumUses).toBe(0);

    // the owner, from an address that has not been failing
    await expectLoggedIn(await uaLogin(clientId, clientSecret, nextAddress()));
    const used = await app.database.db.selectFrom('identityUaClientSecrets').select('clientSecretNumUses').where('id', '=', clientSecretId).executeTakeFirstOrThrow();
    expect(used.clientSecretNumUses).toBe(1);
  });

  test('one at a time from one address: exactly the limit of 401s, then 429s', async () => {
    const { clientId } = await uaIdentity('one-at-a-time');
    const from = nextAddress();
    const statuses = [];
    for (let attempt = 0; attempt < 12; attempt++) statuses.push((await uaLogin(clientId, wrongSecret, from)).statusCode);
    expect(statuses).toEqual([...Array(5).fill(401), ...Array(7).fill(429)]);
  });

  test('a refusal is the same for a client id that does not exist', async () => {
    const from = nextAddress();
    const unknown = '00000000-0000-4000-8000-0000000000aa';
    const statuses = [];
    for (let attempt = 0; attempt < 6; attempt++) statuses.push((await uaLogin(unknown, wrongSecret, from)).statusCode);
    expect(statuses).toEqual([...Array(5).fill(401), 429]);
    expectLockedOut(await uaLogin(unknown, wrongSecret, from), pairLocked);
  });

  test('a success clears the count of its address', async () => {
    const { clientId, clientSecret } = await uaIdentity('clears');
    const from = nextAddress();
    for (let attempt = 0; attempt < 4; attempt++) expect((await uaLogin(clientId, wrongSecret, from)).statusCode).toBe(401);
    expect((await uaLogin(clientId, clientSecret, from)).statusCode).toBe(200);
    for (let attempt = 0; attempt < 4; attempt++) expect((await uaLogin(clientId, wrongSecret, from)).statusCode).toBe(401);
    expect((await uaLogin(clientId, clientSecret, from)).statusCode).toBe(200);
  });

  test('an attacker hammering the client id from one address: the owner logs in from another every time', async () => {
    const { clientId, clientSecret } = await uaIdentity('hammered');
    const attacker = nextAddress();
    const owner = nextAddress();
    const { attackerStatuses, owners } = await whileAttacked(
      async () => (await uaLogin(clientId, wrongSecret, attacker)).statusCode,
      15,
      () => uaLogin(clientId, clientSecret, owner),
    );
    for (const answer of owners) await expectLoggedIn(answer);
    expect(attackerStatuses.length).toBeGreaterThan(15 * 2);
    expect(attackerStatuses.slice(0, 5)).toEqual(Array(5).fill(401));
    expect(new Set(attackerStatuses.slice(5))).toEqual(new Set([429]));
  });

  test('an attacker guessing from ever new addresses: the client id is guarded (one failure locks an address), the owner still logs in every time', async () => {
    const { clientId, clientSecret } = await uaIdentity('sprayed');
    // three attempts from each new address, as a botnet rotating its addresses
    const attackers = Array.from({ length: 200 }, () => nextAddress());
    const owner = nextAddress();
    const { attackerStatuses, owners } = await whileAttacked(
      async (n) => (await uaLogin(clientId, wrongSecret, attackers[Math.floor(n / 3) % attackers.length]!)).statusCode,
      25,
      () => uaLogin(clientId, clientSecret, owner),
    );
    for (const answer of owners) await expectLoggedIn(answer);
    expect(attackerStatuses.length).toBeGreaterThan(25 * 2);
    expect(attackerStatuses.every((status) => status === 401 || status === 429)).toBe(true);

    // the guard began once the client id had 20 failures, audited in its organization with no secret
    const [guard, ...more] = await auditEntries('login-guard', `clientId=${clientId}`);
    expect(more).toEqual([]);
    expect(guard).toMatchObject({
      actor: { type: 'unknownUser', metadata: {} },
      event: { type: 'login-guard', metadata: { method: 'universal-auth', scope: 'credential', clientId, failures: 20, lockouts: 1, lockoutSeconds: 60 } },
    });
    // while guarded, a new address gets one guess, then it is locked out of this client id
    const next = nextAddress();
    expect((await uaLogin(clientId, wrongSecret, next)).statusCode).toBe(401);
    expectLockedOut(await uaLogin(clientId, clientSecret, next), pairLocked);
    // and an address that has not failed logins in, as many times as it likes
    for (let attempt = 0; attempt < 3; attempt++) await expectLoggedIn(await uaLogin(clientId, clientSecret, nextAddress()));
  });

  test('a lockout is audited once (actor unknownUser, client id and address, no secret), and the next one of the same pair lasts twice as long', async () => {
    const { clientId, clientSecret } = await uaIdentity('audited-lockout');
    const from = nextAddress();
    for (let attempt = 0; attempt < 5; attempt++) await uaLogin(clientId, wrongSecret, from);
    const first = expectLockedOut(await uaLogin(clientId, clientSecret, from), pairLocked);
    expect(first).toBeLessThanOrEqual(60);

    const entries = await auditEntries('login-lockout', `clientId=${clientId}`);
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({
      actor: { type: 'unknownUser', metadata: {} },
      ipAddress: from,
      event: {
        type: 'login-lockout',
        metadata: { method: 'universal-auth', scope: 'credential-address', clientId, address: from, failures: 5, lockouts: 1, lockoutSeconds: 60 },
      },
    });
    expect(JSON.stringify(entries)).not.toContain(wrongSecret);
    expect(JSON.stringify(entries)).not.toContain(clientSecret);

    // the lockout runs out (its end moved into the past); five more failures lock the pair for 120 s
    await app.database.db
      .updateTable('loginThrottles')
      .set({ lockedUntil: new Date(Date.now() - 1000) })
      .where('lockedUntil', '>', new Date())
      .where('key', 'like', 'pair:%')
      .execute();
    for (let attempt = 0; attempt < 5; attempt++) expect((await uaLogin(clientId, wrongSecret, from)).statusCode).toBe(401);
    const second = expectLockedOut(await uaLogin(clientId, clientSecret, from), pairLocked);
    expect(second).toBeGreaterThan(60);
    expect(second).toBeLessThanOrEqual(120);
    expect(await auditEntries('login-lockout', `clientId=${clientId}`)).toHaveLength(2);
  });

  test('failures from one address across many client ids lock the address, not the others', async () => {
    const { clientId, clientSecret } = await uaIdentity('innocent');
    const attacker = nextAddress();
    for (let attempt = 0; attempt < DEFAULT_LOGIN_LIMITS.addressMaxFailures; attempt++) {
      expect((await uaLogin(`00000000-0000-4000-8000-${String(attempt).padStart(12, '0')}`, wrongSecret, attacker)).statusCode).toBe(401);
    }
    expectLockedOut(await uaLogin(clientId, clientSecret, attacker), /^Too many failed logins from this address; try again in \d+ seconds$/);
    expect((await uaLogin(clientId, clientSecret, nextAddress())).statusCode).toBe(200);
    const entries = await auditEntries('login-lockout', 'scope=address');
    expect(entries.map((entry) => entry.event.metadata.address)).toContain(attacker);
  });

  test('IPv6 addresses are counted by their /64', async () => {
    for (let attempt = 0; attempt < DEFAULT_LOGIN_LIMITS.addressMaxFailures; attempt++) {
      await uaLogin(`00000000-0000-4000-8000-${String(attempt).padStart(12, '1')}`, wrongSecret, `2001:db8:aa:bb::${attempt.toString(16)}`);
    }
    const { clientId, clientSecret } = await uaIdentity('v6-neighbour');
    expectLockedOut(await uaLogin(clientId, clientSecret, '2001:db8:aa:bb:ffff::1'), /from this address/);
    expect((await uaLogin(clientId, clientSecret, '2001:db8:aa:cc::1')).statusCode).toBe(200);
  });

  test('bad input (422) is not counted as a guess', async () => {
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
  /** A user with a password of their own, in the fixture's organization. */
  async function newUser(email: string, password: string) {
    const [{ inviteToken }] = (await fx.call('POST', '/api/v1/invite-org/signup', { inviteeEmails: [email], organizationId: fx.orgId })).invites;
    const accepted = await inject(app, 'POST', '/api/v1/invite-org/accept', {
      body: { email, organizationId: fx.orgId, inviteToken, password },
      remoteAddress: nextAddress(),
    });
    expect(accepted.status).toBe(200);
  }
  const userLogin = (email: string, password: string, remoteAddress: string) => inject(app, 'POST', '/api/v1/auth/login', { body: { email, password }, remoteAddress });

  test('20 wrong passwords from one address: 5 × 401, then 429 there, the right password too; another address logs in', async () => {
    await newUser('guessed@example.com', 'guessed user password');
    const attacker = nextAddress();
    const statuses = [];
    for (let attempt = 0; attempt < 20; attempt++) statuses.push((await userLogin('guessed@example.com', `wrong password ${attempt}`, attacker)).status);
    expect(statuses).toEqual([...Array(5).fill(401), ...Array(15).fill(429)]);
    const right = await userLogin('guessed@example.com', 'guessed user password', attacker);
    expect(right.status).toBe(429);
    expect(right.body).toEqual({
      statusCode: 429,
      error: 'RateLimitExceeded',
      code: 'RateLimitExceeded',
      message: expect.stringMatching(/^Too many failed logins for this email from this address; try again in \d+ seconds$/),
      reqId: expect.any(String),
    });
    // the email is the credential, whatever its case
    expect((await userLogin('GUESSED@example.com', 'guessed user password', attacker)).status).toBe(429);
    const owner = await userLogin('GUESSED@example.com', 'guessed user password', nextAddress());
    expect(owner.status).toBe(200);
    expect(owner.body.accessToken).toEqual(expect.any(String));
  });

  test('an attacker guessing a password from ever new addresses: the owner logs in from another every time', async () => {
    await newUser('sprayed@example.com', 'sprayed user password');
    const attackers = Array.from({ length: 100 }, () => nextAddress());
    const owner = nextAddress();
    const { attackerStatuses, owners } = await whileAttacked(
      async (n) => (await userLogin('sprayed@example.com', `guess ${n}`, attackers[Math.floor(n / 3) % attackers.length]!)).status,
      12,
      () => userLogin('sprayed@example.com', 'sprayed user password', owner),
    );
    expect(owners.map((answer) => answer.status)).toEqual(Array(12).fill(200));
    expect(attackerStatuses.every((status) => status === 401 || status === 429)).toBe(true);
    expect(attackerStatuses.filter((status) => status === 401).length).toBeGreaterThanOrEqual(DEFAULT_LOGIN_LIMITS.credentialMaxFailures);
    expect(await auditEntries('login-guard', 'email=sprayed@example.com')).toHaveLength(1);
  });

  test('wrong invite tokens lock the address out of the email; the right token there is refused and the invite stays open; from another address it is accepted', async () => {
    const email = 'invited@example.com';
    const [{ inviteToken }] = (await fx.call('POST', '/api/v1/invite-org/signup', { inviteeEmails: [email], organizationId: fx.orgId })).invites;
    const attacker = nextAddress();
    const accept = (token: string, from: string) =>
      inject(app, 'POST', '/api/v1/invite-org/accept', {
        body: { email, organizationId: fx.orgId, inviteToken: token, password: 'invited password' },
        remoteAddress: from,
      });
    for (let attempt = 0; attempt < 5; attempt++) expect((await accept(`${'0'.repeat(63)}${attempt}`, attacker)).status).toBe(401);
    const before = await snapshotDatabase(app.database);
    expect((await accept(inviteToken, attacker)).status).toBe(429);
    expect(await snapshotDatabase(app.database)).toEqual(before);
    expect((await accept(inviteToken, nextAddress())).status).toBe(200);
  });
});

describe('two app instances on one database share the counts', () => {
  test('failures on both add up to a lockout both refuse; both let another address log in', async () => {
    // PostgreSQL: another replica with its own pool; PGlite: another app over the same embedded database
    const other = app.backend === 'postgres' ? await startReplica(app) : await startSibling(app, app.keys);
    try {
      const { clientId, clientSecret } = await uaIdentity('two-instances');
      const from = nextAddress();
      for (let attempt = 0; attempt < 3; attempt++) expect((await uaLogin(clientId, wrongSecret, from)).statusCode).toBe(401);
      for (let attempt = 0; attempt < 2; attempt++) expect((await uaLogin(clientId, wrongSecret, from, other)).statusCode).toBe(401);
      expectLockedOut(await uaLogin(clientId, clientSecret, from, other), pairLocked);
      expectLockedOut(await uaLogin(clientId, clientSecret, from), pairLocked);
      expect((await uaLogin(clientId, clientSecret, nextAddress(), other)).statusCode).toBe(200);
      expect((await uaLogin(clientId, clientSecret, nextAddress())).statusCode).toBe(200);
    } finally {
      await other.close();
    }
  });
});
