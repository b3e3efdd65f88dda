import { afterAll, beforeAll, describe, expect, test, vi } from 'vitest';
import { type AccessFixture, accessFixture, inject } from '../support/access-fixture.ts';
import { snapshotDatabase, startTestApp, type TestApp } from '../support/test-app.ts';

let app: TestApp;
let fx: AccessFixture;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

beforeAll(async () => {
  app = await startTestApp();
  fx = await accessFixture(app);
});
afterAll(async () => app?.close());

async function uaIdentity(name: string, config: Record<string, unknown> = {}, secret: Record<string, unknown> = {}) {
  const identity = await fx.identity(name, 'member', 'viewer');
  return { ...identity, ...(await fx.universalAuth(identity.id, config, secret)) };
}

describe('configuration and client secrets', () => {
  test('attach applies the reference defaults and the client secret is returned once, stored as a digest', async () => {
    const identity = await fx.identity('ua-defaults');
    const attached = await app.request('POST', `/api/v1/auth/universal-auth/identities/${identity.id}`, { token: fx.token, body: {} });
    expect(attached.status).toBe(200);
    expect(attached.body.identityUniversalAuth).toMatchObject({
      identityId: identity.id,
      clientId: expect.stringMatching(/^[0-9a-f-]{36}$/),
      accessTokenTTL: 2592000,
      accessTokenMaxTTL: 2592000,
      accessTokenNumUsesLimit: 0,
      clientSecretTrustedIps: [
        { ipAddress: '0.0.0.0', type: 'ipv4', prefix: 0 },
        { ipAddress: '::', type: 'ipv6', prefix: 0 },
      ],
    });
    const created = await app.request('POST', `/api/v1/auth/universal-auth/identities/${identity.id}/client-secrets`, {
      token: fx.token,
      body: { description: 'ci', numUsesLimit: 2, ttl: 60 },
    });
    expect(created.status).toBe(200);
    const { clientSecret, clientSecretData } = created.body;
    expect(clientSecret).toMatch(/^[0-9a-f]{64}$/);
    expect(clientSecretData).toMatchObject({
      description: 'ci',
      clientSecretPrefix: clientSecret.slice(0, 4),
      clientSecretNumUses: 0,
      clientSecretNumUsesLimit: 2,
      clientSecretTTL: 60,
      isClientSecretRevoked: false,
      identityUAId: attached.body.identityUniversalAuth.id,
    });
    const listed = await app.request('GET', `/api/v1/auth/universal-auth/identities/${identity.id}/client-secrets`, { token: fx.token });
    expect(JSON.stringify(listed.body)).not.toContain(clientSecret);
    const dump = JSON.stringify(await snapshotDatabase(app.database));
    expect(dump).not.toContain(clientSecret);
    const audit = await app.database.db.selectFrom('auditLogs').select(['eventType', 'eventMetadata']).execute();
    expect(audit.map((row) => row.eventType)).toEqual(
      expect.arrayContaining(['add-identity-universal-auth', 'create-identity-universal-auth-client-secret', 'get-identity-universal-auth-client-secret']),
    );
    expect(JSON.stringify(audit)).not.toContain(clientSecret);
  });

  test.each([
    ['a TTL above the max TTL', { accessTokenTTL: 100, accessTokenMaxTTL: 50 }, 400],
    ['an invalid CIDR', { clientSecretTrustedIps: [{ ipAddress: '10.0.0.0/33' }] }, 422],
    ['an address that is not one', { accessTokenTrustedIps: [{ ipAddress: 'example.com' }] }, 422],
    ['an empty trusted list', { accessTokenTrustedIps: [] }, 422],
    ['a negative use limit', { accessTokenNumUsesLimit: -1 }, 422],
  ])('attach with %s is refused and changes nothing', async (_name, body, status) => {
    const identity = await fx.identity(`ua-bad-${status}-${Math.random()}`);
    const before = await snapshotDatabase(app.database);
    const response = await app.request('POST', `/api/v1/auth/universal-auth/identities/${identity.id}`, { token: fx.token, body });
    expect(response.status).toBe(status);
    expect(await snapshotDatabase(app.database)).toEqual(before);
  });

  test('attaching twice, unknown identities and secrets are refused and change nothing', async () => {
    const identity = await uaIdentity('ua-twice');
    const before = await snapshotDatabase(app.database);
    const base = `/api/v1/auth/universal-auth/identities`;
    expect((await app.request('POST', `${base}/${identity.id}`, { token: fx.token, body: {} })).status).toBe(400);
    expect((await app.request('GET', `${base}/00000000-0000-0000-0000-000000000000`, { token: fx.token })).status).toBe(404);
    expect((await app.request('GET', `${base}/${identity.id}/client-secrets/nope`, { token: fx.token })).status).toBe(404);
    expect((await app.request('POST', `${base}/${identity.id}/client-secrets`, { token: fx.token, body: { ttl: -1 } })).status).toBe(422);
    expect(await snapshotDatabase(app.database)).toEqual(before);
  });
});

describe('login', () => {
  test('JSON and form bodies both log in; the token works and is audited without credentials', async () => {
    const identity = await uaIdentity('ua-login');
    const json = await fx.login(identity.clientId, identity.clientSecret);
    expect(json.status).toBe(200);
    expect(json.body).toMatchObject({ accessToken: expect.any(String), expiresIn: 2592000, accessTokenMaxTTL: 2592000, tokenType: 'Bearer' });
    const form = await inject(app, 'POST', '/api/v1/auth/universal-auth/login', {
      body: { clientId: identity.clientId, clientSecret: identity.clientSecret },
      form: true,
    });
    expect(form.status).toBe(200);
    const projects = await app.request('GET', '/api/v1/workspace', { token: json.body.accessToken });
    expect(projects.status).toBe(200);
    expect(projects.body.workspaces.map((project: { id: string }) => project.id)).toEqual([fx.projectId]);
    const audit = await app.database.db.selectFrom('auditLogs').selectAll().where('eventType', '=', 'login-identity-universal-auth').execute();
    expect(audit.length).toBeGreaterThanOrEqual(2);
    expect(audit[0]).toMatchObject({ actor: 'identity', eventMetadata: expect.objectContaining({ identityId: identity.id, clientSecretId: identity.clientSecretId }) });
    expect(JSON.stringify(audit)).not.toContain(identity.clientSecret);
    expect(app.logs.join('\n')).not.toContain(identity.clientSecret);
  });

  test('a client secret with numUsesLimit N allows exactly N logins, also when they race', async () => {
    const identity = await uaIdentity('ua-uses', {}, { numUsesLimit: 3 });
    const statuses = [];
    for (let i = 0; i < 4; i++) statuses.push((await fx.login(identity.clientId, identity.clientSecret)).status);
    expect(statuses).toEqual([200, 200, 200, 401]);

    const racing = await uaIdentity('ua-race', {}, { numUsesLimit: 5 });
    const results = await Promise.all(Array.from({ length: 12 }, () => fx.login(racing.clientId, racing.clientSecret)));
    expect(results.filter((result) => result.status === 200)).toHaveLength(5);
    expect(results.filter((result) => result.status === 401)).toHaveLength(7);
  });

  test('a client secret with a ttl stops working when it has passed', async () => {
    const identity = await uaIdentity('ua-ttl', {}, { ttl: 1 });
    expect((await fx.login(identity.clientId, identity.clientSecret)).status).toBe(200);
    // fixed sleep: the client secret's 1-s TTL must pass on the server's clock
    await sleep(1100);
    const late = await fx.login(identity.clientId, identity.clientSecret);
    expect(late.status).toBe(401);
    expect(late.body).toMatchObject({ statusCode: 401, message: 'Invalid credentials' });
  });

  test('a revoked client secret fails; wrong secret, unknown client id and revoked answer identically', async () => {
    const identity = await uaIdentity('ua-revoked');
    const revoked = await app.request('POST', `/api/v1/auth/universal-auth/identities/${identity.id}/client-secrets/${identity.clientSecretId}/revoke`, {
      token: fx.token,
    });
    expect(revoked.body.clientSecretData.isClientSecretRevoked).toBe(true);
    const other = await uaIdentity('ua-other');
    const before = await snapshotDatabase(app.database, ['login_throttles']);
    const answers = await Promise.all([
      fx.login(identity.clientId, identity.clientSecret),
      fx.login(other.clientId, 'f'.repeat(64)),
      fx.login('00000000-0000-0000-0000-000000000000', other.clientSecret),
      fx.login(identity.clientId, other.clientSecret),
    ]);
    for (const answer of answers) {
      const { reqId: _reqId, ...body } = answer.body;
      expect(answer.status).toBe(401);
      expect(body).toEqual({ statusCode: 401, error: 'UnauthorizedError', code: 'UnauthorizedError', message: 'Invalid credentials' });
    }
    // nothing changed but the failures counted (login throttling)
    expect(await snapshotDatabase(app.database, ['login_throttles'])).toEqual(before);
  });

  test('a wrong secret takes the same path as a right one: one digest, one constant-time comparison, the same queries', async () => {
    const identity = await uaIdentity('ua-path');
    const credentials = app.services.credentials;
    const digest = vi.spyOn(credentials, 'digest');
    const matches = vi.spyOn(credentials, 'matches');
    const queries: string[] = [];
    const db = app.database.db;
    const originalTransaction = db.transaction.bind(db);
    const trace = vi.spyOn(db, 'transaction').mockImplementation(() => {
      const builder = originalTransaction();
      const execute = builder.execute.bind(builder);
      return Object.assign(builder, {
        execute: (work: (trx: never) => Promise<unknown>) =>
          execute((trx) =>
            work(trx.withPlugin({ transformQuery: (args) => (queries.push(args.node.kind), args.node), transformResult: async (args) => args.result }) as never),
          ),
      });
    });
    try {
      const run = async (secret: string) => {
        digest.mockClear();
        matches.mockClear();
        queries.length = 0;
        const response = await fx.login(identity.clientId, secret);
        return { status: response.status, digests: digest.mock.calls.length, compares: matches.mock.calls.length, queries: [...queries] };
      };
      const right = await run(identity.clientSecret);
      const last = identity.clientSecret.at(-1) === '0' ? '1' : '0';
      const wrong = await run(`${identity.clientSecret.slice(0, 63)}${last}`);
      const unknown = await run('0'.repeat(64));
      expect(right.status).toBe(200);
      expect([wrong.status, unknown.status]).toEqual([401, 401]);
      for (const failed of [wrong, unknown]) {
        expect(failed.digests).toBe(right.digests);
        expect(failed.compares).toBe(right.compares);
        expect(failed.compares).toBe(1);
        // Up to the decision both ran the same statements (throttle lock and check, savepoint, the single lookup);
        // a failure then only rolls back to the savepoint and counts itself in login_throttles.
        expect(failed.queries.slice(0, 4)).toEqual(right.queries.slice(0, 4));
        expect(failed.queries.slice(0, 4)).toEqual(['RawNode', 'SelectQueryNode', 'RawNode', 'SelectQueryNode']);
        expect(failed.queries[4]).toBe('RawNode');
      }
    } finally {
      trace.mockRestore();
      digest.mockRestore();
      matches.mockRestore();
    }
  });
});

describe('trusted IPs and access tokens', () => {
  test('client secret trusted IPs are honoured at login', async () => {
    const identity = await uaIdentity('ua-ip-login', { clientSecretTrustedIps: [{ ipAddress: '10.1.0.0/16' }] });
    expect((await fx.login(identity.clientId, identity.clientSecret, '10.1.2.3')).status).toBe(200);
    const before = await snapshotDatabase(app.database);
    const outside = await fx.login(identity.clientId, identity.clientSecret, '10.2.0.1');
    expect(outside.status).toBe(403);
    expect(await snapshotDatabase(app.database)).toEqual(before);
  });

  test('access token trusted IPs are read live on every request', async () => {
    const identity = await uaIdentity('ua-ip-token', { accessTokenTrustedIps: [{ ipAddress: '192.168.1.0/24' }, { ipAddress: '2001:db8::/32' }] });
    const { accessToken } = (await fx.login(identity.clientId, identity.clientSecret)).body;
    const get = (remoteAddress: string) => inject(app, 'GET', '/api/v1/workspace', { token: accessToken, remoteAddress });
    expect((await get('192.168.1.77')).status).toBe(200);
    expect((await get('::ffff:192.168.1.77')).status).toBe(200);
    expect((await get('2001:db8::1')).status).toBe(200);
    expect((await get('192.168.2.1')).status).toBe(403);
    await fx.call('PATCH', `/api/v1/auth/universal-auth/identities/${identity.id}`, { accessTokenTrustedIps: [{ ipAddress: '192.168.2.0/24' }] });
    expect((await get('192.168.1.77')).status).toBe(403);
    expect((await get('192.168.2.1')).status).toBe(200);
  });

  test('an access token use limit allows exactly that many requests', async () => {
    const identity = await uaIdentity('ua-token-uses', { accessTokenNumUsesLimit: 2 });
    const { accessToken } = (await fx.login(identity.clientId, identity.clientSecret)).body;
    const statuses = [];
    for (let i = 0; i < 3; i++) statuses.push((await app.request('GET', '/api/v1/workspace', { token: accessToken })).status);
    expect(statuses).toEqual([200, 200, 401]);
  });

  test('renew restarts the TTL within the max TTL; revoke ends the token', async () => {
    const identity = await uaIdentity('ua-renew', { accessTokenTTL: 2, accessTokenMaxTTL: 60 });
    const { accessToken } = (await fx.login(identity.clientId, identity.clientSecret)).body;
    // fixed sleep: past half the 2-s TTL, so the renewal is what keeps the token alive
    await sleep(1200);
    const renewed = await app.request('POST', '/api/v1/auth/token/renew', { token: accessToken, body: { accessToken } });
    expect(renewed.status).toBe(200);
    expect(renewed.body).toMatchObject({ accessToken, expiresIn: 2, accessTokenMaxTTL: 60, tokenType: 'Bearer' });
    // fixed sleep: past the first 2 s since login: only the renewal's restart of the TTL lets this through
    await sleep(1200);
    expect((await app.request('GET', '/api/v1/workspace', { token: accessToken })).status).toBe(200);
    const revoked = await app.request('POST', '/api/v1/auth/token/revoke', { token: fx.token, body: { accessToken } });
    expect(revoked.body).toEqual({ message: 'Successfully revoked access token' });
    expect((await app.request('GET', '/api/v1/workspace', { token: accessToken })).status).toBe(401);
    expect((await app.request('POST', '/api/v1/auth/token/revoke', { token: fx.token, body: { accessToken } })).status).toBe(401);
  });

  test('removing universal auth ends its client secrets and tokens', async () => {
    const identity = await uaIdentity('ua-removed');
    const { accessToken } = (await fx.login(identity.clientId, identity.clientSecret)).body;
    await fx.call('DELETE', `/api/v1/auth/universal-auth/identities/${identity.id}`);
    expect((await app.request('GET', '/api/v1/workspace', { token: accessToken })).status).toBe(401);
    expect((await fx.login(identity.clientId, identity.clientSecret)).status).toBe(401);
  });
});
