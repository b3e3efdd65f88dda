import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { sql } from 'kysely';
import * as OTPAuth from 'otpauth';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { Keyring } from '../../src/crypto/keyring.ts';
import { openDatabase } from '../../src/db/database.ts';
import { DatabaseInUseError, holdServingLock, RotationUnderWayError, withServingLockExclusive } from '../../src/db/serving-lock.ts';
import { openStreamHeaders, openStreamKey } from '../../src/audit-streams/audit-stream-cipher.ts';
import { RootKeyMismatchError, rotateRootKey, verifyRootKey } from '../../src/installation/root-key.ts';
import { openClientSecret } from '../../src/sso/client-secret-cipher.ts';
import { secretsFixture } from '../support/secrets-fixture.ts';
import { currentBackend, snapshotDatabase, startSibling, startTestApp, type TestApp } from '../support/test-app.ts';

/**
 * The root key is checked against the database before anything is served, and
 * rotated in one transaction. (The start-up refusal of the real binary is in
 * test/e2e/root-key.test.ts.)
 */
let app: TestApp;
let fx: Awaited<ReturnType<typeof secretsFixture>>;
const keyOf = (base64: string) => new Keyring(Buffer.from(base64, 'base64'));
const raw = (base64: string) => Buffer.from(base64, 'base64');
const newKey = randomBytes(32).toString('base64');

beforeAll(async () => {
  app = await startTestApp();
  fx = await secretsFixture(app);
  expect((await fx.createSecret('DB_PASSWORD', { secretValue: 'before-rotation' })).status).toBe(200);
  expect((await fx.createSecret('API_KEY', { secretValue: 'also-before', secretPath: '/' })).status).toBe(200);
});
afterAll(async () => app?.close());

const ADMIN_USER = { email: 'admin@example.com', password: 'correct horse battery' };

/** An OIDC configuration and a TOTP enrolment: secrets sealed under the root key, which a rotation re-seals. */
async function sealedSignInSecrets() {
  const orgSlug = (await app.database.db.selectFrom('organizations').select('slug').executeTakeFirstOrThrow()).slug;
  const body = { orgSlug, discoveryURL: 'https://issuer.example.com', clientId: 'c', clientSecret: 'rotated-client-secret', allowedEmailDomains: 'example.com' };
  expect((await app.request('POST', '/api/v1/sso/oidc/config', { token: fx.token, body })).status).toBe(200);
  const loginToken = (await app.request('POST', '/api/v3/auth/login', { body: ADMIN_USER })).body.accessToken;
  const totpSecret: string = (await app.request('POST', '/api/v1/auth/mfa/totp', { token: loginToken })).body.secret;
  const code = new OTPAuth.TOTP({ secret: OTPAuth.Secret.fromBase32(totpSecret), period: 30 }).generate();
  expect((await app.request('POST', '/api/v1/auth/mfa/totp/confirm', { token: loginToken, body: { code } })).status).toBe(200);
  const stream = await app.request('POST', '/api/v1/audit-log-streams', {
    token: fx.token,
    body: { url: 'http://127.0.0.1:9/audit', signingKey: 'rotated-signing-key', headers: [{ key: 'Authorization', value: 'Bearer rotated-header' }] },
  });
  expect(stream.status).toBe(200);
  return { totpSecret };
}

describe('the key check', () => {
  test('the first start records a check value that is not the key; the same key passes again', async () => {
    const first = await verifyRootKey(app.database.db, app.services.keyring);
    expect(first.recorded).toBe(true);
    const row = await app.database.db.selectFrom('installation').selectAll().executeTakeFirstOrThrow();
    expect(row.id).toBe(first.installationId);
    expect(row.rootKeyCheck).toHaveLength(32);
    expect(row.rootKeyCheck!.equals(Buffer.from(app.keys.encryptionKey, 'base64'))).toBe(false);
    expect(await verifyRootKey(app.database.db, app.services.keyring)).toEqual({ installationId: row.id, recorded: false });
  });

  test('another key is refused with a message naming the installation, and nothing is written', async () => {
    const before = await snapshotDatabase(app.database);
    const error = await verifyRootKey(app.database.db, keyOf(randomBytes(32).toString('base64'))).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(RootKeyMismatchError);
    expect((error as Error).message).toMatch(/^COFFER_ENCRYPTION_KEY is not the root key of this database \(installation [0-9a-f-]{36}\)/);
    expect(await snapshotDatabase(app.database)).toEqual(before);
  });

  test('a database recorded before check values: a wrong key is caught by a project data key, not recorded', async () => {
    await app.database.db.updateTable('installation').set({ rootKeyCheck: null }).execute();
    await expect(verifyRootKey(app.database.db, keyOf(newKey))).rejects.toBeInstanceOf(RootKeyMismatchError);
    expect((await app.database.db.selectFrom('installation').select('rootKeyCheck').executeTakeFirstOrThrow()).rootKeyCheck).toBeNull();
    expect((await verifyRootKey(app.database.db, app.services.keyring)).recorded).toBe(true);
  });
});

describe('rotation', () => {
  test('a project key that cannot be opened aborts the whole rotation: no key and no check value changed', async () => {
    const broken = await app.request('POST', '/api/v2/workspace', { token: fx.token, body: { projectName: 'Broken key' } });
    const brokenId = broken.body.project.id;
    await app.database.db
      .updateTable('projects')
      .set({ encryptedDataKey: randomBytes(60) })
      .where('id', '=', brokenId)
      .execute();
    const before = await snapshotDatabase(app.database);
    await expect(rotateRootKey(app.database.db, raw(app.keys.encryptionKey), raw(newKey))).rejects.toBeInstanceOf(RootKeyMismatchError);
    expect(await snapshotDatabase(app.database)).toEqual(before);
    expect((await app.request('DELETE', `/api/v1/workspace/${brokenId}`, { token: fx.token })).status).toBe(200);
  });

  test('rotate with the wrong current key: refused, nothing changed', async () => {
    const before = await snapshotDatabase(app.database);
    await expect(rotateRootKey(app.database.db, randomBytes(32), raw(newKey))).rejects.toThrow(
      /^the current key \(COFFER_ENCRYPTION_KEY\) is not the root key of this database/,
    );
    expect(await snapshotDatabase(app.database)).toEqual(before);
  });

  test('rotate, then start with the new key: every secret reads as before; the old key is refused', async () => {
    const sealed = await sealedSignInSecrets();
    const wrapped = await app.database.db.selectFrom('projects').select(['id', 'encryptedDataKey']).orderBy('id').execute();
    const result = await rotateRootKey(app.database.db, raw(app.keys.encryptionKey), raw(newKey));
    expect(result.projects).toBe(wrapped.length);
    const rewrapped = await app.database.db.selectFrom('projects').select(['id', 'encryptedDataKey']).orderBy('id').execute();
    expect(rewrapped.map((row) => row.id)).toEqual(wrapped.map((row) => row.id));
    rewrapped.forEach((row, index) => expect(row.encryptedDataKey!.equals(wrapped[index]!.encryptedDataKey!)).toBe(false));

    await expect(verifyRootKey(app.database.db, app.services.keyring)).rejects.toBeInstanceOf(RootKeyMismatchError);
    const restarted = await startSibling(app, { ...app.keys, encryptionKey: newKey });
    try {
      expect((await verifyRootKey(restarted.database.db, restarted.services.keyring)).recorded).toBe(false);
      const listed = await restarted.request('GET', '/api/v3/secrets/raw', { token: fx.token, query: { workspaceId: fx.projectId, environment: 'dev' } });
      expect(listed.status).toBe(200);
      const values = Object.fromEntries(listed.body.secrets.map((secret: { secretKey: string; secretValue: string }) => [secret.secretKey, secret.secretValue]));
      expect(values).toEqual({ DB_PASSWORD: 'before-rotation', API_KEY: 'also-before' });
      const created = await restarted.request('POST', '/api/v2/workspace', { token: fx.token, body: { projectName: 'After rotation' } });
      expect(created.status).toBe(200);
      // the OIDC client secret and the TOTP secret were re-sealed with the new key
      const config = await restarted.database.db.selectFrom('orgOidcConfigs').selectAll().executeTakeFirstOrThrow();
      expect(openClientSecret(keyOf(newKey), config.orgId, config.encryptedClientSecret)).toBe('rotated-client-secret');
      // and so were an audit log stream's signing key and headers
      const stream = await restarted.database.db.selectFrom('auditLogStreams').selectAll().executeTakeFirstOrThrow();
      expect(openStreamKey(keyOf(newKey), stream.orgId, stream.encryptedSecretKey)).toBe('rotated-signing-key');
      expect(openStreamHeaders(keyOf(newKey), stream.orgId, stream.encryptedHeaders)).toEqual([{ key: 'Authorization', value: 'Bearer rotated-header' }]);
      const code = new OTPAuth.TOTP({ secret: OTPAuth.Secret.fromBase32(sealed.totpSecret), period: 30 }).generate({ timestamp: Date.now() + 30_000 });
      const signedIn = await restarted.request('POST', '/api/v1/auth/login', { body: { ...ADMIN_USER, totpCode: code } });
      expect(signedIn.status, JSON.stringify(signedIn.body)).toBe(200);
    } finally {
      await restarted.close();
    }
  });

  test('a server still running with the old key cannot create a project after the rotation (503, nothing written)', async () => {
    const before = await snapshotDatabase(app.database);
    const refused = await app.request('POST', '/api/v2/workspace', { token: fx.token, body: { projectName: 'Old key' } });
    expect(refused.status).toBe(503);
    expect(refused.body).toMatchObject({ statusCode: 503, error: 'ServiceUnavailable', code: 'RootKeyRotated', reqId: expect.any(String) });
    expect(await snapshotDatabase(app.database)).toEqual(before);
  });
});

/**
 * The serving lock every server holds and a rotation takes exclusive (the real
 * binary's refusal is in test/e2e/root-key.test.ts). On the embedded database
 * the data directory's lock plays its part.
 */
describe('the serving lock', () => {
  const noLoss = { onLost: (error: Error) => expect.unreachable(error.message), stillValid: async () => {} };

  test.skipIf(currentBackend() !== 'postgres')(
    'on PostgreSQL only (PGlite takes no advisory lock): a rotation is refused while a server holds it, naming the holder; it runs once the server is gone',
    async () => {
      const [server, rotation] = [await openDatabase({ databaseUrl: app.databaseUrl, dataDir: '' }), await openDatabase({ databaseUrl: app.databaseUrl, dataDir: '' })];
      try {
        const lock = await holdServingLock(server, { command: 'serve', ...noLoss });
        let rotated = false;
        const refused = await withServingLockExclusive(rotation, async () => (rotated = true)).catch((error: unknown) => error);
        expect(refused).toBeInstanceOf(DatabaseInUseError);
        expect((refused as DatabaseInUseError).holders).toEqual([
          {
            backendPid: expect.any(Number),
            applicationName: `coffer serve pid ${process.pid} on ${hostname()}`.slice(0, 63),
            clientAddress: expect.stringMatching(/:\d+$/),
            rotating: false,
          },
        ]);
        expect(rotated).toBe(false);

        await lock!.release();
        // the server gone, the rotation runs; while it does, no server starts
        const outcome = await withServingLockExclusive(rotation, async () => {
          await expect(holdServingLock(server, { command: 'serve', ...noLoss })).rejects.toBeInstanceOf(RotationUnderWayError);
          return 'rotated';
        });
        expect(outcome).toBe('rotated');
        const starting = await holdServingLock(server, { command: 'serve', ...noLoss });
        await starting!.release();
      } finally {
        await Promise.all([server.close(), rotation.close()]);
      }
    },
  );

  test.skipIf(currentBackend() !== 'postgres')(
    'on PostgreSQL only (PGlite takes no advisory lock): a server whose lock connection breaks takes the lock again on a new one and checks the root key',
    async () => {
      const [server, rotation] = [await openDatabase({ databaseUrl: app.databaseUrl, dataDir: '' }), await openDatabase({ databaseUrl: app.databaseUrl, dataDir: '' })];
      try {
        let checked!: () => void;
        const rechecked = new Promise<void>((resolve) => (checked = resolve));
        await holdServingLock(server, { command: 'serve', onLost: (error) => expect.unreachable(error.message), stillValid: async () => checked(), retryMs: 50 });
        const holder = ((await withServingLockExclusive(rotation, async () => undefined).catch((error: unknown) => error)) as DatabaseInUseError).holders[0]!;
        await sql`SELECT pg_terminate_backend(${holder.backendPid})`.execute(rotation.db);
        await rechecked;
        const again = (await withServingLockExclusive(rotation, async () => undefined).catch((error: unknown) => error)) as DatabaseInUseError;
        expect(again).toBeInstanceOf(DatabaseInUseError);
        expect(again.holders.map((entry) => entry.backendPid)).not.toContain(holder.backendPid);
      } finally {
        await Promise.all([server.close(), rotation.close()]);
      }
    },
  );

  test.skipIf(currentBackend() !== 'pglite')(
    'on PGlite only (PostgreSQL takes the advisory lock, above): no advisory lock is taken: the data directory is the lock',
    async () => {
      expect(await holdServingLock(app.database, { command: 'serve', ...noLoss })).toBeUndefined();
      expect(await withServingLockExclusive(app.database, async () => 'ran')).toBe('ran');
    },
  );
});
