import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { secretsFixture } from '../support/secrets-fixture.ts';
import { type ApiResponse, startTestApp, type TestApp } from '../support/test-app.ts';

/**
 * Concurrent requests that touch the same thing: a loser gets 409 (or 404 when
 * what it writes into vanished), never 500, and a batch is all or nothing.
 * On PGlite requests run one transaction at a time, so the same requests
 * meet the same rules in sequence.
 */
let app: TestApp;
let fixture: Awaited<ReturnType<typeof secretsFixture>>;

beforeAll(async () => {
  app = await startTestApp();
  fixture = await secretsFixture(app);
});
afterAll(async () => app?.close());

const errorShape = (status: number) => ({
  statusCode: status,
  error: expect.any(String),
  code: expect.any(String),
  message: expect.any(String),
  reqId: expect.any(String),
});

function expectOnly(responses: ApiResponse[], allowed: number[]) {
  for (const response of responses) {
    expect(allowed, JSON.stringify(response.body)).toContain(response.status);
    if (response.status >= 400) expect(response.body).toEqual(errorShape(response.status));
  }
}

async function keysIn(secretPath: string, workspaceId = fixture.projectId): Promise<string[]> {
  const listing = await app.request('GET', '/api/v3/secrets/raw', { token: fixture.token, query: { workspaceId, environment: 'dev', secretPath } });
  expect(listing.status).toBe(200);
  return listing.body.secrets.map((secret: { secretKey: string }) => secret.secretKey).sort();
}

describe('batch creates sharing a key', () => {
  /** Ten batches at once into a new folder: whether any raced (409) or all saw the winner's commit first (400). */
  async function tenAtOnce(folder: string): Promise<{ raced: boolean }> {
    expect((await fixture.createFolder('/', folder)).status).toBe(200);
    const batches = Array.from({ length: 10 }, (_, index) =>
      app.request('POST', '/api/v3/secrets/batch/raw', {
        token: fixture.token,
        body: {
          workspaceId: fixture.projectId,
          environment: 'dev',
          secretPath: `/${folder}`,
          secrets: [
            { secretKey: 'SHARED', secretValue: `from batch ${index}` },
            { secretKey: `OWN_${index}`, secretValue: 'own' },
          ],
        },
      }),
    );
    const responses = await Promise.all(batches);
    const winners = responses.flatMap((response, index) => (response.status === 200 ? [index] : []));
    expect(winners).toHaveLength(1);
    // A loser that saw the winner's commit before it started is told the key exists (400, as the reference); one that raced it, 409.
    for (const response of responses.filter((candidate) => candidate.status !== 200)) {
      expect([409, 400]).toContain(response.status);
      expect(response.body).toEqual(errorShape(response.status));
      if (response.status === 400) expect(response.body).toMatchObject({ error: 'BadRequest', code: 'SecretExists' });
    }
    expect(await keysIn(`/${folder}`)).toEqual(['SHARED', `OWN_${winners[0]}`].sort());
    return { raced: responses.some((response) => response.status === 409) };
  }

  test('ten at once: one wins whole, the others 409 with nothing written', async () => {
    // on a busy machine the ten may meet one after another; rounds go on (up to five) until two of them raced
    let raced = false;
    for (let round = 0; round < 5 && !raced; round++) raced = (await tenAtOnce(`batch${round}`)).raced;
    if (app.backend === 'postgres') expect(raced, 'no round raced on PostgreSQL').toBe(true);
  });
});

describe('writes racing a delete', () => {
  test('secrets written into a folder being deleted: 200 or 404, never 500', async () => {
    for (let round = 0; round < 40; round++) {
      const name = `doomed${round}`;
      expect((await fixture.createFolder('/', name)).status).toBe(200);
      // Staggered starts, so that the delete lands between some writer's folder lookup and its insert.
      const later = <T>(ms: number, call: () => Promise<T>) => new Promise((resolve) => setTimeout(resolve, ms)).then(call);
      const writes = Array.from({ length: 8 }, (_, index) => later(index % 4, () => fixture.createSecret(`K${index}`, { secretPath: `/${name}` })));
      const batch = later(round % 3, () =>
        app.request('POST', '/api/v3/secrets/batch/raw', {
          token: fixture.token,
          body: { workspaceId: fixture.projectId, environment: 'dev', secretPath: `/${name}`, secrets: [{ secretKey: 'B1', secretValue: 'b' }] },
        }),
      );
      const folder = later(round % 2, () =>
        app.request('POST', '/api/v1/folders', {
          token: fixture.token,
          body: { workspaceId: fixture.projectId, environment: 'dev', path: `/${name}`, name: 'child' },
        }),
      );
      const deletion = app.request('DELETE', `/api/v1/folders/${name}`, {
        token: fixture.token,
        body: { workspaceId: fixture.projectId, environment: 'dev', path: '/' },
      });
      const responses = await Promise.all([...writes, batch, folder, deletion]);
      expectOnly(responses, [200, 404]);
      expect(responses.at(-1)!.status).toBe(200);
      // The folder is gone, unless the folder create (which makes missing parents) came after the delete and made it anew.
      const remaining = await app.request('GET', '/api/v1/folders', {
        token: fixture.token,
        query: { workspaceId: fixture.projectId, environment: 'dev', path: `/${name}` },
      });
      if (remaining.body.folders.length > 0) expect(remaining.body.folders.map((entry: { name: string }) => entry.name)).toEqual(['child']);
    }
  });

  test('creates into a project being deleted: 200 or 404, never 500', async () => {
    for (let round = 0; round < 4; round++) {
      const created = await app.request('POST', '/api/v2/workspace', { token: fixture.token, body: { projectName: `Doomed ${round}` } });
      expect(created.status).toBe(200);
      const workspaceId: string = created.body.project.id;
      const token = fixture.token;
      const writes = [
        app.request('POST', `/api/v1/workspace/${workspaceId}/environments`, { token, body: { name: 'Extra', slug: 'extra' } }),
        app.request('POST', '/api/v1/folders', { token, body: { workspaceId, environment: 'dev', path: '/', name: 'f' } }),
        app.request('POST', '/api/v3/secrets/raw/A', { token, body: { workspaceId, environment: 'dev', secretValue: 'a' } }),
        app.request('POST', '/api/v3/secrets/batch/raw', { token, body: { workspaceId, environment: 'prod', secrets: [{ secretKey: 'B', secretValue: 'b' }] } }),
        app.request('POST', `/api/v1/workspace/${workspaceId}/tags`, { token, body: { slug: 'tag', color: '#000000' } }),
        app.request('POST', '/api/v1/secret-imports', { token, body: { workspaceId, environment: 'dev', path: '/', import: { environment: 'prod', path: '/' } } }),
      ];
      const deletion = app.request('DELETE', `/api/v1/workspace/${workspaceId}`, { token });
      const responses = await Promise.all([...writes, deletion]);
      expectOnly(responses, [200, 404]);
      expect(responses.at(-1)!.status).toBe(200);
      expect((await app.request('GET', `/api/v1/workspace/${workspaceId}`, { token })).status).toBe(404);
    }
  });
});

describe('conflicting writes', () => {
  test('concurrent environment creates with one slug: one 200, the others 400 or 409', async () => {
    const responses = await Promise.all(
      Array.from({ length: 6 }, () =>
        app.request('POST', `/api/v1/workspace/${fixture.projectId}/environments`, { token: fixture.token, body: { name: 'Same', slug: 'same-slug' } }),
      ),
    );
    expect(responses.filter((response) => response.status === 200)).toHaveLength(1);
    expectOnly(responses, [200, 400, 409]);
  });

  test('concurrent renames to one name: one 200, the others 400 or 409; both secrets still readable', async () => {
    expect((await fixture.createSecret('RENAME_A')).status).toBe(200);
    expect((await fixture.createSecret('RENAME_B')).status).toBe(200);
    const responses = await Promise.all(['RENAME_A', 'RENAME_B'].map((name) => fixture.updateSecret(name, { newSecretName: 'RENAMED' })));
    expect(responses.filter((response) => response.status === 200)).toHaveLength(1);
    expectOnly(responses, [200, 400, 409]);
    const keys = await keysIn('/');
    expect(keys).toContain('RENAMED');
    expect(keys.filter((key) => key.startsWith('RENAME_'))).toHaveLength(1);
  });

  test('concurrent updates and a delete of one secret: 200 or 404, never 500', async () => {
    expect((await fixture.createSecret('CONTENDED')).status).toBe(200);
    const responses = await Promise.all([
      ...Array.from({ length: 5 }, (_, index) => fixture.updateSecret('CONTENDED', { secretValue: `v${index}` })),
      fixture.deleteSecret('CONTENDED'),
      fixture.deleteSecret('CONTENDED'),
    ]);
    expectOnly(responses, [200, 404]);
    expect((await fixture.getSecret('CONTENDED')).status).toBe(404);
  });

  test('concurrent folder creates along one new path: all 200, one folder each', async () => {
    const responses = await Promise.all(Array.from({ length: 6 }, () => fixture.createFolder('/race/deep', 'leaf')));
    expectOnly(responses, [200]);
    const listing = await app.request('GET', '/api/v1/folders', {
      token: fixture.token,
      query: { workspaceId: fixture.projectId, environment: 'dev', path: '/race/deep' },
    });
    expect(listing.body.folders.map((folder: { name: string }) => folder.name)).toEqual(['leaf']);
  });
});
