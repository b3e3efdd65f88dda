import type { Actor } from '../../src/actor/actor.ts';
import { bootstrap, type TestApp } from './test-app.ts';

/** A bootstrapped instance with one project; helpers to call the secrets API in it. */
export async function secretsFixture(app: TestApp, slug = 'secrets-project') {
  const admin = await bootstrap(app);
  const created = await app.request('POST', '/api/v2/workspace', { token: admin.token, body: { projectName: 'Secrets', slug } });
  if (created.status !== 200) throw new Error(JSON.stringify(created.body));
  const projectId: string = created.body.project.id;
  const token = admin.token;
  const base = { workspaceId: projectId, environment: 'dev' };

  return {
    ...admin,
    projectId,
    projectSlug: slug,
    createSecret: (name: string, body: Record<string, unknown> = {}) =>
      app.request('POST', `/api/v3/secrets/raw/${encodeURIComponent(name)}`, { token, body: { ...base, secretValue: 'v', ...body } }),
    updateSecret: (name: string, body: Record<string, unknown>) =>
      app.request('PATCH', `/api/v3/secrets/raw/${encodeURIComponent(name)}`, { token, body: { ...base, ...body } }),
    deleteSecret: (name: string, body: Record<string, unknown> = {}) =>
      app.request('DELETE', `/api/v3/secrets/raw/${encodeURIComponent(name)}`, { token, body: { ...base, ...body } }),
    getSecret: (name: string, query: Record<string, string> = {}) =>
      app.request('GET', `/api/v3/secrets/raw/${encodeURIComponent(name)}`, { token, query: { ...base, ...query } }),
    listSecrets: (query: Record<string, string> = {}) => app.request('GET', '/api/v3/secrets/raw', { token, query: { ...base, ...query } }),
    createFolder: (path: string, name: string, environment = 'dev') =>
      app.request('POST', '/api/v1/folders', { token, body: { workspaceId: projectId, environment, path, name } }),
    createImport: (path: string, source: { environment: string; path: string }, environment = 'dev') =>
      app.request('POST', '/api/v1/secret-imports', { token, body: { workspaceId: projectId, environment, path, import: source } }),
    createTag: (slug: string) => app.request('POST', `/api/v1/workspace/${projectId}/tags`, { token, body: { slug, color: '#ff0000' } }),
    /** The bootstrap admin user as an in-process actor, for personal secrets (users only). */
    userActor(): Actor {
      return {
        kind: 'user',
        id: admin.userId,
        name: 'admin@example.com',
        orgId: admin.orgId,
        orgRole: 'admin',
        tokenId: null,
        authMethod: 'password',
        ip: '127.0.0.1',
        userAgent: 'test',
        userAgentType: 'other',
      };
    },
  };
}
