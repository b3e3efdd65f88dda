import { InfisicalSDK } from '@infisical/sdk';
import { describe, expect, test } from 'vitest';
import { type Backend, startConformanceServer } from './conformance-server.ts';

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

      // Infisical features Coffer does not offer: the SDK gets the API's 404
      await expect(client.kms().keys().getByName({ name: 'none', projectId: server.projectId })).rejects.toThrow(/404|not found/i);
      await expect(client.dynamicSecrets().leases.create({ dynamicSecretName: 'none', projectSlug: server.projectSlug, environmentSlug: 'dev' })).rejects.toThrow(
        /404|not found/i,
      );
    } finally {
      await server.stop();
    }
  });
});
