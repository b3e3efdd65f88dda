import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { TokenSigner } from '../../src/crypto/tokens.ts';
import { bootstrap, snapshotDatabase, startTestApp, type TestApp } from '../support/test-app.ts';

let app: TestApp;

beforeAll(async () => {
  app = await startTestApp();
});
afterAll(async () => app?.close());

describe('bootstrap', () => {
  test('rejects bad input with 422 and changes nothing', async () => {
    const before = await snapshotDatabase(app.database);
    for (const body of [
      {},
      { email: 'not-an-email', password: 'long enough', organization: 'Acme' },
      { email: 'a@example.com', password: 'short', organization: 'Acme' },
      { email: 'a@example.com', password: 'long enough', organization: '' },
      { email: 'a@example.com', password: 12345678, organization: 'Acme' },
    ]) {
      const response = await app.request('POST', '/api/v1/admin/bootstrap', { body });
      expect(response.status, JSON.stringify(body)).toBe(422);
      expect(response.body).toMatchObject({ statusCode: 422, error: 'ValidationFailure' });
      expect(typeof response.body.reqId).toBe('string');
    }
    expect(await snapshotDatabase(app.database)).toEqual(before);
  });

  test('works once on an empty instance and returns the admin identity token', async () => {
    const response = await app.request('POST', '/api/v1/admin/bootstrap', {
      body: { email: 'admin@example.com', password: 'correct horse battery', organization: 'Acme Corp' },
    });
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({
      message: expect.any(String),
      user: { id: expect.any(String), email: 'admin@example.com', username: 'admin@example.com' },
      organization: { id: expect.any(String), name: 'Acme Corp', slug: 'acme-corp' },
      identity: { id: expect.any(String), name: 'coffer-admin', credentials: { token: expect.any(String) } },
    });
    expect(JSON.stringify(response.body)).not.toContain('passwordHash');

    const token = response.body.identity.credentials.token;
    const projects = await app.request('GET', '/api/v1/workspace', { token });
    expect(projects.status).toBe(200);
    expect(projects.body).toEqual({ workspaces: [] });

    const users = await app.database.db.selectFrom('users').select('passwordHash').execute();
    expect(users).toHaveLength(1);
    expect(users[0]!.passwordHash).toMatch(/^\$argon2id\$/);
  });

  test('a second bootstrap is refused with 400 and changes nothing', async () => {
    const before = await snapshotDatabase(app.database);
    const response = await app.request('POST', '/api/v1/admin/bootstrap', {
      body: { email: 'other@example.com', password: 'another password', organization: 'Other' },
    });
    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({ statusCode: 400, error: 'BadRequest', code: 'BootstrapError', message: 'This instance has already been set up' });
    expect(await snapshotDatabase(app.database)).toEqual(before);
  });
});

describe('access tokens', () => {
  let token: string;
  let identityId: string;

  beforeAll(async () => {
    const fresh = await startTestApp();
    await app.close();
    app = fresh;
    ({ token, identityId } = await bootstrap(app));
  });

  const tokenRow = () => app.database.db.selectFrom('identityAccessTokens').selectAll().where('identityId', '=', identityId).executeTakeFirstOrThrow();

  test.each([
    ['no Authorization header', undefined, 401, 'UnauthorizedError'],
    ['a non-bearer scheme', 'Basic dXNlcjpwYXNz', 401, 'UnauthorizedError'],
    ['a malformed token', 'Bearer not-a-jwt', 403, 'TokenError'],
    ['a token signed with another secret', 'FORGED', 403, 'TokenError'],
  ])('%s is refused', async (_name, header, status, error) => {
    let authorization = header;
    if (header === 'FORGED') {
      const row = await tokenRow();
      const forged = await new SignJWT({ authTokenType: 'identityAccessToken', identityId, identityAccessTokenId: row.id })
        .setProtectedHeader({ alg: 'HS256' })
        .sign(new TextEncoder().encode('x'.repeat(48)));
      authorization = `Bearer ${forged}`;
    }
    const response = await app.request('GET', '/api/v1/workspace', { headers: authorization ? { authorization } : {} });
    expect(response.status).toBe(status);
    expect(response.body).toMatchObject({ statusCode: status, error });
  });

  test('an expired token is refused', async () => {
    const row = await tokenRow();
    // A second token row for the same identity (max TTL 1 s), whose JWT the instance's key signed a minute ago: expired now.
    const issued = await app.services.auth.issueIdentityToken(app.database.db, {
      identityId,
      authMethod: 'token-auth',
      name: 'short',
      accessTokenTtl: 1,
      accessTokenMaxTtl: 1,
      accessTokenNumUsesLimit: 0,
    });
    expect(row.id).toBeTruthy();
    const aMinuteAgo = new TokenSigner(app.keys.authSecret, () => Date.now() - 60_000);
    const expired = await aMinuteAgo.sign({ authTokenType: 'identityAccessToken', identityId, identityAccessTokenId: issued.tokenId }, 1);
    const response = await app.request('GET', '/api/v1/workspace', { token: expired });
    expect(response.status).toBe(403);
    expect(response.body).toMatchObject({ error: 'TokenError', message: 'Your token has expired. Please re-authenticate.' });
  });

  test('a token past its TTL is refused and removed, even without a JWT expiry', async () => {
    const issued = await app.services.auth.issueIdentityToken(app.database.db, {
      identityId,
      authMethod: 'token-auth',
      name: 'ttl',
      accessTokenTtl: 1,
      accessTokenMaxTtl: 0,
      accessTokenNumUsesLimit: 0,
    });
    expect((await app.request('GET', '/api/v1/workspace', { token: issued.accessToken })).status).toBe(200);
    // fixed sleep: the same token, already used (and cached), must lapse when its 1-s TTL passes on the server's clock
    await new Promise((resolve) => setTimeout(resolve, 1100));
    const response = await app.request('GET', '/api/v1/workspace', { token: issued.accessToken });
    expect(response.status).toBe(401);
    const remaining = await app.database.db.selectFrom('identityAccessTokens').select('id').where('name', '=', 'ttl').execute();
    expect(remaining).toEqual([]);
  });

  test('a use-limited token allows exactly its number of uses', async () => {
    const issued = await app.services.auth.issueIdentityToken(app.database.db, {
      identityId,
      authMethod: 'token-auth',
      name: 'limited',
      accessTokenTtl: 0,
      accessTokenMaxTtl: 0,
      accessTokenNumUsesLimit: 3,
    });
    const statuses = [];
    for (let i = 0; i < 4; i++) statuses.push((await app.request('GET', '/api/v1/workspace', { token: issued.accessToken })).status);
    expect(statuses).toEqual([200, 200, 200, 401]);
  });

  test('a revoked token is refused', async () => {
    const issued = await app.services.auth.issueIdentityToken(app.database.db, {
      identityId,
      authMethod: 'token-auth',
      name: 'revoked',
      accessTokenTtl: 0,
      accessTokenMaxTtl: 0,
      accessTokenNumUsesLimit: 0,
    });
    await app.database.db.updateTable('identityAccessTokens').set({ isAccessTokenRevoked: true }).where('name', '=', 'revoked').execute();
    const response = await app.request('GET', '/api/v1/workspace', { token: issued.accessToken });
    expect(response.status).toBe(401);
    expect(response.body).toMatchObject({ statusCode: 401, error: 'UnauthorizedError' });
  });

  test('the bootstrap token keeps working', async () => {
    expect((await app.request('GET', '/api/v1/workspace', { token })).status).toBe(200);
  });
});
