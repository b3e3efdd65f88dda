import { exportJWK, exportPKCS8, exportSPKI, generateKeyPair, type JWTPayload, SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { JWKS_CACHE } from '../../src/jwt-auth/jwt-verifier.ts';
import { type AccessFixture, accessFixture, inject } from '../support/access-fixture.ts';
import { json, type LocalServer, selfSignedCertificate, startLocalServer } from '../support/local-https.ts';
import { snapshotDatabase, startTestApp, type TestApp } from '../support/test-app.ts';

let app: TestApp;
let fx: AccessFixture;
type KeyPair = Awaited<ReturnType<typeof generateKeyPair>>;
let signer: KeyPair;
let stranger: KeyPair;
let publicPem: string;
let jwks: LocalServer;
let jwksKeys: { keys: unknown[] };

const base = '/api/v1/auth/jwt-auth/identities';
const ISSUER = 'https://issuer.example.com';
const bounds = {
  boundIssuer: ISSUER,
  boundAudiences: 'coffer, other',
  boundSubject: 'system:serviceaccount:apps:web',
  boundClaims: { 'kubernetes.io.namespace': 'apps,tools' },
};
const goodClaims: JWTPayload = { iss: ISSUER, aud: ['coffer'], sub: 'system:serviceaccount:apps:web', 'kubernetes.io': { namespace: 'apps' } };

beforeAll(async () => {
  app = await startTestApp();
  fx = await accessFixture(app, 'jwt-project');
  signer = await generateKeyPair('ES256', { extractable: true });
  stranger = await generateKeyPair('ES256');
  publicPem = await exportSPKI(signer.publicKey);
  jwksKeys = { keys: [{ ...(await exportJWK(signer.publicKey)), kid: 'k1', alg: 'ES256', use: 'sig' }] };
  jwks = await startLocalServer((request, response) => {
    if (request.url === '/redirect') return void response.writeHead(302, { location: `${jwks.url}/keys` }).end();
    if (request.url === '/huge') return json(response, 200, { keys: [], padding: 'x'.repeat(400 * 1024) });
    if (request.url === '/error') return json(response, 500, { message: 'internal detail LEAKED-BODY' });
    json(response, 200, jwksKeys);
  });
});
afterAll(async () => {
  await jwks?.close();
  await app?.close();
});

function sign(claims: JWTPayload, key: KeyPair['privateKey'] = signer.privateKey, { expiresIn = '5m', kid = 'k1' }: { expiresIn?: string | null; kid?: string } = {}) {
  const jwt = new SignJWT(claims).setProtectedHeader({ alg: 'ES256', kid }).setIssuedAt();
  if (expiresIn) jwt.setExpirationTime(expiresIn);
  return jwt.sign(key);
}

/** An identity (project viewer) with JWT Auth. */
async function jwtIdentity(name: string, config: Record<string, unknown>) {
  const identity = await fx.identity(name, 'member', 'viewer');
  const attached = await app.request('POST', `${base}/${identity.id}`, { token: fx.token, body: config });
  expect(attached.status, JSON.stringify(attached.body)).toBe(200);
  return { ...identity, config: attached.body.identityJwtAuth };
}

const login = (identityId: string, jwt: string, remoteAddress?: string) =>
  inject(app, 'POST', '/api/v1/auth/jwt-auth/login', { body: { identityId, jwt }, remoteAddress });

async function readsSecrets(token: string) {
  return app.request('GET', '/api/v3/secrets/raw', { token, query: { workspaceId: fx.projectId, environment: 'dev' } });
}

describe('login with static public keys', () => {
  test('a token signed by a configured key with the bound claims logs in; the access token reads secrets', async () => {
    const identity = await jwtIdentity('jwt-static', { configurationType: 'static', publicKeys: [publicPem], ...bounds, accessTokenTTL: 600, accessTokenMaxTTL: 1200 });
    expect(identity.config).toMatchObject({
      configurationType: 'static',
      publicKeys: [publicPem],
      boundIssuer: ISSUER,
      boundClaims: bounds.boundClaims,
      accessTokenTTL: 600,
    });
    const response = await login(identity.id, await sign(goodClaims));
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    expect(response.body).toEqual({ accessToken: expect.any(String), expiresIn: 600, accessTokenMaxTTL: 1200, tokenType: 'Bearer' });
    expect((await readsSecrets(response.body.accessToken)).status).toBe(200);
    const audit = await app.database.db
      .selectFrom('auditLogs')
      .select(['eventType', 'eventMetadata', 'actorMetadata'])
      .where('eventType', '=', 'login-identity-jwt-auth')
      .execute();
    expect(audit).toHaveLength(1);
    expect(audit[0]!.eventMetadata).toMatchObject({ identityId: identity.id, identityJwtAuthId: identity.config.id, subject: goodClaims.sub });
  });

  test('a single audience as a string and a second key of another type both work', async () => {
    const rsa = await generateKeyPair('RS256');
    const identity = await jwtIdentity('jwt-two-keys', {
      configurationType: 'static',
      publicKeys: [publicPem, await exportSPKI(rsa.publicKey)],
      boundAudiences: 'coffer',
    });
    const token = await new SignJWT({ aud: 'coffer' }).setProtectedHeader({ alg: 'RS256' }).setExpirationTime('5m').sign(rsa.privateKey);
    expect((await login(identity.id, token)).status).toBe(200);
  });

  const refusals: [string, () => Promise<string>][] = [
    ['a wrong issuer', () => sign({ ...goodClaims, iss: 'https://evil.example.com' })],
    ['no bound audience', () => sign({ ...goodClaims, aud: ['someone-else'] })],
    ['a wrong subject', () => sign({ ...goodClaims, sub: 'system:serviceaccount:apps:other' })],
    ['a claim outside the allowed values', () => sign({ ...goodClaims, 'kubernetes.io': { namespace: 'kube-system' } })],
    ['a missing bound claim', () => sign({ iss: ISSUER, aud: 'coffer', sub: goodClaims.sub! })],
    ['an expired token', () => sign(goodClaims, signer.privateKey, { expiresIn: '-5m' })],
    ['no expiry', () => sign(goodClaims, signer.privateKey, { expiresIn: null })],
    ['a signature by another key', () => sign(goodClaims, stranger.privateKey)],
    ['alg none', async () => `${Buffer.from('{"alg":"none"}').toString('base64url')}.${Buffer.from(JSON.stringify({ ...goodClaims, exp: 9e9 })).toString('base64url')}.`],
    [
      'an HMAC token keyed with the public key',
      async () => new SignJWT({ ...goodClaims }).setProtectedHeader({ alg: 'HS256' }).setExpirationTime('5m').sign(new TextEncoder().encode(publicPem)),
    ],
    ['a token that is not a JWT', async () => 'not-a-jwt'],
  ];

  test.each(refusals)('%s: 401 that names nothing, no token issued', async (_name, make) => {
    const identity = await jwtIdentity(`jwt-refused-${Math.random()}`, { configurationType: 'static', publicKeys: [publicPem], ...bounds });
    const jwt = await make();
    const before = await snapshotDatabase(app.database, ['login_throttles', 'audit_logs']);
    const response = await login(identity.id, jwt);
    expect(response.status).toBe(401);
    expect(response.body).toMatchObject({ statusCode: 401, message: 'Invalid credentials', error: 'UnauthorizedError' });
    const text = JSON.stringify(response.body);
    for (const secret of [ISSUER, 'apps', 'coffer', jwt]) expect(text).not.toContain(secret);
    expect(await snapshotDatabase(app.database, ['login_throttles', 'audit_logs'])).toEqual(before);
  });

  test('an unknown identity, one without JWT Auth and one with only universal auth answer the same 401', async () => {
    const plain = await fx.identity('jwt-none');
    const jwt = await sign(goodClaims);
    for (const identityId of ['00000000-0000-4000-8000-000000000000', plain.id, 'not-a-uuid']) {
      const response = await login(identityId, jwt);
      expect(response.status).toBe(401);
      expect(response.body.message).toBe('Invalid credentials');
    }
  });

  test('the access token obeys the configuration: trusted IPs, and removal revokes it', async () => {
    const identity = await jwtIdentity('jwt-ips', { configurationType: 'static', publicKeys: [publicPem], accessTokenTrustedIps: [{ ipAddress: '10.0.0.0/8' }] });
    const issued = await login(identity.id, await sign({ aud: 'x' }), '10.1.2.3');
    expect(issued.status).toBe(200);
    const token = issued.body.accessToken;
    const query = { workspaceId: fx.projectId, environment: 'dev' };
    expect((await inject(app, 'GET', '/api/v3/secrets/raw', { token, query, remoteAddress: '10.9.9.9' })).status).toBe(200);
    expect((await inject(app, 'GET', '/api/v3/secrets/raw', { token, query, remoteAddress: '192.168.1.1' })).status).toBe(403);
    const removed = await app.request('DELETE', `${base}/${identity.id}`, { token: fx.token });
    expect(removed.status).toBe(200);
    expect((await inject(app, 'GET', '/api/v3/secrets/raw', { token, query, remoteAddress: '10.9.9.9' })).status).toBe(401);
    expect((await login(identity.id, await sign({ aud: 'x' }), '10.1.2.3')).status).toBe(401);
  });

  test('failed logins are throttled per identity and address: past the limit even a good token from there is refused with 429, never from elsewhere', async () => {
    const throttled = await startTestApp({ loginLimits: { ...app.loginLimits, maxFailures: 3 } });
    try {
      const tfx = await accessFixture(throttled, 'jwt-throttle');
      const identity = await tfx.identity('jwt-throttled', 'member');
      const attached = await throttled.request('POST', `${base}/${identity.id}`, { token: tfx.token, body: { configurationType: 'static', publicKeys: [publicPem] } });
      expect(attached.status).toBe(200);
      const bad = await sign({}, stranger.privateKey);
      for (let i = 0; i < 3; i++)
        expect((await inject(throttled, 'POST', '/api/v1/auth/jwt-auth/login', { body: { identityId: identity.id, jwt: bad } })).status).toBe(401);
      const good = await inject(throttled, 'POST', '/api/v1/auth/jwt-auth/login', { body: { identityId: identity.id, jwt: await sign({}) } });
      expect(good.status).toBe(429);
      expect(good.body.message).toContain('for this identity');
      // the identity itself is never locked: the workload from another address logs in
      const elsewhere = await inject(throttled, 'POST', '/api/v1/auth/jwt-auth/login', {
        body: { identityId: identity.id, jwt: await sign({}) },
        remoteAddress: '10.0.0.9',
      });
      expect(elsewhere.status, JSON.stringify(elsewhere.body)).toBe(200);
    } finally {
      await throttled.close();
    }
  });
});

describe('login with a JWKS URL', () => {
  test('keys come from the URL over TLS verified with the configured CA; a new key is fetched when a token names it', async () => {
    const identity = await jwtIdentity('jwt-jwks', { configurationType: 'jwks', jwksUrl: `${jwks.url}/keys`, jwksCaCert: jwks.caCert, boundAudiences: 'coffer' });
    expect((await login(identity.id, await sign({ aud: 'coffer' }))).status).toBe(200);
    const rotated = await generateKeyPair('ES256');
    jwksKeys.keys.push({ ...(await exportJWK(rotated.publicKey)), kid: 'k2', alg: 'ES256', use: 'sig' });
    const cooldown = JWKS_CACHE.cooldownMs;
    JWKS_CACHE.cooldownMs = 0;
    try {
      expect((await login(identity.id, await sign({ aud: 'coffer' }, rotated.privateKey, { kid: 'k2' }))).status).toBe(200);
    } finally {
      JWKS_CACHE.cooldownMs = cooldown;
    }
  });

  test.each([
    ['a CA that did not sign the server certificate', 'keys', 'other-ca', 'unreachable'],
    ['no CA (the system roots do not know the server)', 'keys', '', 'unreachable'],
    ['a redirect (never followed)', 'redirect', 'ca', 'status 302'],
    ['an answer over the size limit', 'huge', 'ca', 'too-large'],
    ['an error answer (its body never echoed)', 'error', 'ca', 'status 500'],
  ])('%s: 401 and no detail', async (_name, route, ca, reason) => {
    const jwksCaCert = ca === 'ca' ? jwks.caCert : ca === 'other-ca' ? (await selfSignedCertificate()).cert : '';
    const identity = await jwtIdentity(`jwt-jwks-bad-${Math.random()}`, { configurationType: 'jwks', jwksUrl: `${jwks.url}/${route}`, jwksCaCert });
    const response = await login(identity.id, await sign({ aud: 'coffer' }));
    expect(response.status).toBe(401);
    expect(response.body.message).toBe('Invalid credentials');
    expect(JSON.stringify(response.body)).not.toContain('LEAKED-BODY');
    const logged = app.logs.filter((line) => line.includes(identity.id) && line.includes('workload login refused'));
    expect(logged.join('\n')).toContain(`outbound call failed: ${reason}`);
    expect(app.logs.join('\n')).not.toContain('LEAKED-BODY');
  });

  test('a JWKS URL that cannot be reached answers 401', async () => {
    const closed = await startLocalServer(() => undefined);
    await closed.close();
    const identity = await jwtIdentity('jwt-jwks-closed', { configurationType: 'jwks', jwksUrl: `${closed.url}/keys`, jwksCaCert: closed.caCert });
    expect((await login(identity.id, await sign({}))).status).toBe(401);
  });
});

describe('configuration routes', () => {
  test('get, update and the audit entries; fields left out keep their value', async () => {
    const identity = await jwtIdentity('jwt-crud', { configurationType: 'static', publicKeys: [publicPem], boundIssuer: ISSUER });
    const fetched = await app.request('GET', `${base}/${identity.id}`, { token: fx.token });
    expect(fetched.status).toBe(200);
    expect(fetched.body.identityJwtAuth).toEqual(identity.config);
    const updated = await app.request('PATCH', `${base}/${identity.id}`, { token: fx.token, body: { boundSubject: 'me', accessTokenNumUsesLimit: 3 } });
    expect(updated.status).toBe(200);
    expect(updated.body.identityJwtAuth).toMatchObject({ boundIssuer: ISSUER, boundSubject: 'me', accessTokenNumUsesLimit: 3, publicKeys: [publicPem] });
    const switched = await app.request('PATCH', `${base}/${identity.id}`, { token: fx.token, body: { configurationType: 'jwks', jwksUrl: `${jwks.url}/keys` } });
    expect(switched.body.identityJwtAuth).toMatchObject({ configurationType: 'jwks', jwksUrl: `${jwks.url}/keys` });
    const events = await app.database.db
      .selectFrom('auditLogs')
      .select('eventType')
      .where('eventMetadata', '@>', JSON.stringify({ identityId: identity.id }) as never)
      .execute();
    expect(events.map((row) => row.eventType)).toEqual(expect.arrayContaining(['add-identity-jwt-auth', 'get-identity-jwt-auth', 'update-identity-jwt-auth']));
  });

  test.each([
    ['static without keys', { configurationType: 'static' }, 400],
    ['jwks without a URL', { configurationType: 'jwks' }, 400],
    ['an unknown configuration type', { configurationType: 'oidc', publicKeys: ['x'] }, 422],
    ['an http JWKS URL', { configurationType: 'jwks', jwksUrl: 'http://keys.example.com/jwks' }, 422],
    ['a JWKS URL with credentials', { configurationType: 'jwks', jwksUrl: 'https://user:pw@keys.example.com/jwks' }, 422],
    ['a key that is not PEM', { configurationType: 'static', publicKeys: ['not a key'] }, 422],
    ['a CA that is not a certificate', { configurationType: 'jwks', jwksUrl: 'https://keys.example.com', jwksCaCert: 'garbage' }, 422],
    ['a TTL above the max TTL', { configurationType: 'static', publicKeys: ['PEM'], accessTokenTTL: 100, accessTokenMaxTTL: 50 }, 422],
    [
      'too many bound claims',
      { configurationType: 'static', publicKeys: ['PEM'], boundClaims: Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`c${i}`, 'v'])) },
      422,
    ],
  ])('attach with %s is refused and changes nothing', async (_name, body, status) => {
    const identity = await fx.identity(`jwt-bad-${Math.random()}`);
    const withKey = JSON.parse(JSON.stringify(body).replace('"PEM"', JSON.stringify(publicPem)));
    const before = await snapshotDatabase(app.database);
    const response = await app.request('POST', `${base}/${identity.id}`, { token: fx.token, body: withKey });
    expect(response.status, JSON.stringify(response.body)).toBe(status === 422 && JSON.stringify(body).includes('accessTokenTTL') ? 400 : status);
    expect(response.body).toMatchObject({ statusCode: response.status, error: expect.any(String), reqId: expect.any(String) });
    expect(await snapshotDatabase(app.database)).toEqual(before);
  });

  test('a private key is refused and never stored', async () => {
    const identity = await fx.identity('jwt-private');
    const privatePem = await exportPKCS8(signer.privateKey);
    const before = await snapshotDatabase(app.database);
    const response = await app.request('POST', `${base}/${identity.id}`, { token: fx.token, body: { configurationType: 'static', publicKeys: [privatePem] } });
    expect(response.status).toBe(422);
    expect(JSON.stringify(response.body)).not.toContain('PRIVATE KEY');
    expect(await snapshotDatabase(app.database)).toEqual(before);
  });

  test('attaching twice, unknown identities and another organization’s identity are refused and change nothing', async () => {
    const identity = await jwtIdentity('jwt-twice', { configurationType: 'static', publicKeys: [publicPem] });
    const foreign = await fx.foreignAdmin('jwt-foreign-org');
    const body = { configurationType: 'static', publicKeys: [publicPem] };
    const before = await snapshotDatabase(app.database);
    expect((await app.request('POST', `${base}/${identity.id}`, { token: fx.token, body })).status).toBe(400);
    expect((await app.request('POST', `${base}/00000000-0000-4000-8000-000000000000`, { token: fx.token, body })).status).toBe(404);
    for (const method of ['GET', 'PATCH', 'DELETE']) {
      const response = await app.request(method, `${base}/${identity.id}`, { token: foreign, ...(method === 'PATCH' ? { body: { boundSubject: 'x' } } : {}) });
      expect(response.status, method).toBe(404);
    }
    expect((await app.request('PATCH', `${base}/${identity.id}`, { token: fx.token, body: { configurationType: 'jwks' } })).status).toBe(400);
    expect(await snapshotDatabase(app.database)).toEqual(before);
    const bare = await fx.identity('jwt-bare');
    const beforeBare = await snapshotDatabase(app.database);
    expect((await app.request('GET', `${base}/${bare.id}`, { token: fx.token })).status).toBe(404);
    expect((await app.request('PATCH', `${base}/${bare.id}`, { token: fx.token, body: { boundSubject: 'x' } })).status).toBe(404);
    expect((await app.request('DELETE', `${base}/${bare.id}`, { token: fx.token })).status).toBe(404);
    expect(await snapshotDatabase(app.database)).toEqual(beforeBare);
  });
});

describe('request shapes of the clients (Infisical Go SDK CallJwtAuthLogin / CallKubernetesAuthLogin, the CLI, the operator, ESO)', () => {
  test('JSON {identityId, jwt} with the token as read from a file (trailing newline), a trailing slash, and fields Coffer does not use', async () => {
    const identity = await jwtIdentity('jwt-contract', { configurationType: 'static', publicKeys: [publicPem] });
    const jwt = `${await sign({ aud: 'coffer' })}\n`;
    const response = await inject(app, 'POST', '/api/v1/auth/jwt-auth/login/', {
      body: { identityId: identity.id, jwt, organizationSlug: 'acme', subOrganizationName: 'team' },
      headers: { 'user-agent': 'k8-operator' },
    });
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    expect(Object.keys(response.body).sort()).toEqual(['accessToken', 'accessTokenMaxTTL', 'expiresIn', 'tokenType']);
  });

  test('a form-encoded body, as some scripts send it', async () => {
    const identity = await jwtIdentity('jwt-contract-form', { configurationType: 'static', publicKeys: [publicPem] });
    const response = await inject(app, 'POST', '/api/v1/auth/jwt-auth/login', { body: { identityId: identity.id, jwt: await sign({}) }, form: true });
    expect(response.status, JSON.stringify(response.body)).toBe(200);
  });
});
