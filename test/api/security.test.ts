import { afterAll, beforeAll, expect, test } from 'vitest';
import { bootstrap, snapshotDatabase, startTestApp, type TestApp } from '../support/test-app.ts';

let app: TestApp;
let token: string;

beforeAll(async () => {
  app = await startTestApp();
  ({ token } = await bootstrap(app));
});
afterAll(async () => app?.close());

test('a database dump after creating a project holds no plaintext of its data key', async () => {
  const response = await app.request('POST', '/api/v2/workspace', { token, body: { projectName: 'Dump check' } });
  expect(response.status).toBe(200);
  const projectId = response.body.project.id;
  const row = await app.database.db.selectFrom('projects').select('encryptedDataKey').where('id', '=', projectId).executeTakeFirstOrThrow();
  expect(row.encryptedDataKey).toBeInstanceOf(Buffer);
  const dataKey = app.services.keyring.projectKey(projectId, row.encryptedDataKey!);
  expect(dataKey).toHaveLength(32);

  const dump = JSON.stringify(await snapshotDatabase(app.database));
  for (const encoding of ['hex', 'base64', 'base64url'] as const) {
    expect(dump).not.toContain(dataKey.toString(encoding));
  }
  // The wrapped key is in the dump, and it is not the key.
  expect(dump).toContain(row.encryptedDataKey!.toString('hex'));
});

test('the bootstrap token and the admin password never reach the logs or the audit log', async () => {
  await app.request('GET', '/api/v1/workspace', { token });
  await app.request('GET', '/api/v1/workspace?token=abc', { token: `${token}x` });
  await app.request('POST', '/api/v2/workspace', { token, body: { projectName: 12 } });
  const logs = app.logs.join('\n');
  expect(logs.length).toBeGreaterThan(0);
  expect(logs).toContain('/api/v1/workspace');
  expect(logs).not.toContain(token);
  expect(logs).not.toContain('correct horse battery');
  const audit = JSON.stringify(await app.database.db.selectFrom('auditLogs').selectAll().execute());
  expect(audit).not.toContain(token);
});
