import { DynamicSecretProviders, InfisicalSDK, SqlProviders } from '@infisical/sdk';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { type LeaseTarget, startLeaseTarget } from '../support/lease-target.ts';
import { type Backend, type ConformanceServer, startConformanceServer } from './conformance-server.ts';

/** What a lease answer holds. The SDK's `Lease` type says `expiresAt`; the API (Infisical's and Coffer's) answers `expireAt`. */
interface LeaseAnswer {
  lease: { id: string; expireAt: string; dynamicSecretId: string };
  dynamicSecret?: { id: string; name: string };
  data?: { DB_USERNAME: string; DB_PASSWORD: string };
}

let target: LeaseTarget;
beforeAll(async () => {
  target = await startLeaseTarget();
});
afterAll(async () => target?.destroy());

/**
 * dynamicSecrets(): an admin configures one through the SDK (only project admins write the statements that run on the
 * database), the member identity leases, renews and revokes; the leased role signs in to the target until revoked.
 */
async function dynamicSecretCalls(server: ConformanceServer, client: InfisicalSDK): Promise<void> {
  const admin = new InfisicalSDK({ siteUrl: server.url }).auth().accessToken(server.adminToken);
  const place = { projectSlug: server.projectSlug, environmentSlug: 'dev' };
  const { inputs } = target.provider();
  const provider = { type: DynamicSecretProviders.SqlDatabase, inputs: { ...inputs, client: SqlProviders.Postgres } } as const;
  const configured = await admin.dynamicSecrets().create({ ...place, name: 'orders-db', provider, defaultTTL: '1h', maxTTL: '2h' });
  expect(configured).toMatchObject({ name: 'orders-db', type: 'sql-database', defaultTTL: '1h', maxTTL: '2h' });
  expect(JSON.stringify(configured)).not.toContain(inputs.password);

  const leases = client.dynamicSecrets().leases;
  const leased = (await leases.create({ ...place, dynamicSecretName: 'orders-db' })) as unknown as LeaseAnswer;
  const { DB_USERNAME: username, DB_PASSWORD: password } = leased.data!;
  expect(leased).toMatchObject({ lease: { dynamicSecretId: configured.id }, dynamicSecret: { name: 'orders-db' } });
  expect(await target.signsIn(username, password)).toBe(true);
  const renewed = (await leases.renew(leased.lease.id, { ...place, ttl: '30m' })) as unknown as LeaseAnswer;
  expect(Date.parse(renewed.lease.expireAt) - Date.parse(leased.lease.expireAt)).toBe(1_800_000);
  expect((await target.validUntil(username))?.getTime()).toBe(Math.floor(Date.parse(renewed.lease.expireAt) / 1000) * 1000);
  const revoked = (await leases.delete(leased.lease.id, place)) as unknown as LeaseAnswer;
  expect(revoked.lease.id).toBe(leased.lease.id);
  expect(await target.signsIn(username, password)).toBe(false);
  // what the SDK throws: `[URL=…] [Method=post] [StatusCode=404] <the API's message>`
  await expect(leases.renew(leased.lease.id, place)).rejects.toThrow(`[StatusCode=404] Dynamic secret lease with ID '${leased.lease.id}' not found`);

  expect(await admin.dynamicSecrets().delete('orders-db', place)).toMatchObject({ id: configured.id, name: 'orders-db' });
  await expect(leases.create({ ...place, dynamicSecretName: 'orders-db' })).rejects.toThrow('[StatusCode=404]');
}

/** @infisical/sdk 5.0.2 (devDependency): every call it offers that Coffer serves, on each backend. */
describe.each<Backend>(['pglite', 'postgres'])('Node SDK 5.0.2 against coffer serve on %s', (backend) => {
  test('every call', async () => {
    const server = await startConformanceServer(backend);
    try {
      const client = new InfisicalSDK({ siteUrl: server.url });
      await client.auth().universalAuth.login({ clientId: server.clientId, clientSecret: server.clientSecret });
      await client.auth().universalAuth.renew();
      expect(client.auth().getAccessToken()).toEqual(expect.any(String));
      const secrets = client.secrets();
      const base = { projectId: server.projectId, environment: 'dev' };
      const created = await secrets.createSecret('NODE_SDK', { ...base, secretValue: 'created', secretComment: 'by the Node SDK' });
      expect(created.secret).toMatchObject({ secretKey: 'NODE_SDK', secretValue: 'created', secretComment: 'by the Node SDK' });
      const updated = await secrets.updateSecret('NODE_SDK', { ...base, secretValue: 'updated' });
      expect(updated.secret.secretValue).toBe('updated');
      const got = await secrets.getSecret({ ...base, secretName: 'NODE_SDK' });
      expect(got.secretValue).toBe('updated');
      const imported = await secrets.getSecret({ ...base, secretName: 'FROM_IMPORT', includeImports: true });
      expect(imported.secretValue).toBe('imported');
      const listed = await secrets.listSecrets({ ...base, includeImports: true, expandSecretReferences: true, recursive: true });
      expect(listed.secrets.map((secret) => secret.secretKey).sort()).toEqual(['BASE', 'FROM_IMPORT', 'NODE_SDK']);
      const withImports = await secrets.listSecretsWithImports({ ...base });
      expect(withImports.map((secret) => secret.secretKey).sort()).toEqual(['BASE', 'FROM_IMPORT', 'NODE_SDK']);
      const deleted = await secrets.deleteSecret('NODE_SDK', { ...base });
      expect(deleted.secret.secretKey).toBe('NODE_SDK');

      const folders = client.folders();
      const folder = await folders.create({ name: 'node-folder', projectId: server.projectId, environment: 'dev', path: '/' });
      expect(folder.name).toBe('node-folder');
      const listedFolders = await folders.listFolders({ projectId: server.projectId, environment: 'dev', path: '/' });
      expect(listedFolders.map((entry) => entry.name).sort()).toEqual(['node-folder', 'shared']);

      const environments = client.environments();
      const environment = await environments.create({ projectId: server.projectId, name: 'Preview', slug: 'preview', position: 4 });
      expect(environment).toMatchObject({ slug: 'preview', name: 'Preview' });

      const project = await client.projects().create({ projectName: 'Made by the Node SDK', type: 'secret-manager' });
      expect(project).toMatchObject({ name: 'Made by the Node SDK' });

      await dynamicSecretCalls(server, client);

      // Infisical features Coffer does not offer: the SDK gets the API's 404
      await expect(client.kms().keys().getByName({ name: 'none', projectId: server.projectId })).rejects.toThrow(/404|not found/i);
    } finally {
      await server.stop();
    }
  });
});
