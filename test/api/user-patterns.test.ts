import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { type AccessFixture, accessFixture } from '../support/access-fixture.ts';
import { openEventStream } from '../support/event-stream.ts';
import { snapshotDatabase, startTestApp, type TestApp } from '../support/test-app.ts';

/**
 * Issue 26, part 1: a path glob from a request (a role's or a privilege's
 * `secretPath` condition, an event subscription) compiles to RE2 under bounds.
 * The hostile glob of the issue, `/**\/@(*|*)` repeated and ending in `!`, froze
 * the whole server through picomatch (4.9 s with 8 repetitions, 40 s with 9,
 * hours with 12, against a deep path). Now it is refused with a 422 naming the
 * field past the bounds, and below them answered at once with the right answer.
 * "No freeze" is shown by what comes after: a write, another organization's
 * read and a bystander's event all complete (the test timeout is the bound).
 */
const app: TestApp = await startTestApp();
let fx: AccessFixture;
let base: string;
let foreignToken: string;
let foreignProjectId: string;

const hostile = (repetitions: number) => `${'/**/@(*|*)'.repeat(repetitions)}!`;
/** 29 folders deep: where a backtracking matcher of the hostile glob takes longest. */
const DEEP = `/${Array.from({ length: 29 }, (_, index) => `folder-${index}`).join('/')}`;

/** A project-events subscription over a real socket; `paths` are the secret paths of the events received so far. */
async function subscribe(token: string, body: unknown) {
  const stream = await openEventStream(`${base}/api/v1/events/subscribe/project-events`, { method: 'POST', token, body });
  return {
    response: stream.response,
    get paths(): string[] {
      return stream.events.flatMap((event) => (event.data?.data?.payload ?? []).map((item: { secretPath: string }) => item.secretPath));
    },
    close: () => stream.close(),
  };
}

async function waitFor(what: string, check: () => boolean): Promise<void> {
  const deadline = Date.now() + 15_000;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

const writeSecret = (name: string, secretPath: string) =>
  fx.call('POST', `/api/v3/secrets/raw/${name}`, { workspaceId: fx.projectId, environment: 'dev', secretPath, secretValue: 'v' });
const readSecret = (token: string, name: string, secretPath: string, workspaceId = fx.projectId) =>
  app.request('GET', `/api/v3/secrets/raw/${name}`, { token, query: { workspaceId, environment: 'dev', secretPath } });

/** After the hostile pattern exists: an ordinary write, and a read by another organization, complete with the right answers. */
async function serverStillAnswers(name: string) {
  await writeSecret(name, DEEP);
  const foreign = await readSecret(foreignToken, 'FOREIGN', '/', foreignProjectId);
  expect(foreign.status).toBe(200);
  expect(foreign.body.secret).toMatchObject({ secretKey: 'FOREIGN', secretValue: 'theirs' });
}

beforeAll(async () => {
  fx = await accessFixture(app, 'user-patterns');
  let parent = '/';
  for (const name of DEEP.split('/').slice(1)) {
    await fx.call('POST', '/api/v1/folders', { workspaceId: fx.projectId, environment: 'dev', path: parent, name });
    parent = parent === '/' ? `/${name}` : `${parent}/${name}`;
  }
  foreignToken = await fx.foreignAdmin('patterns-elsewhere');
  const project = await app.request('POST', '/api/v2/workspace', { token: foreignToken, body: { projectName: 'Elsewhere', slug: 'elsewhere' } });
  foreignProjectId = project.body.project.id;
  const secret = await app.request('POST', '/api/v3/secrets/raw/FOREIGN', {
    token: foreignToken,
    body: { workspaceId: foreignProjectId, environment: 'dev', secretValue: 'theirs' },
  });
  expect(secret.status).toBe(200);
  await app.app.listen({ port: 0, host: '127.0.0.1' });
  base = `http://127.0.0.1:${(app.app.server.address() as AddressInfo).port}`;
}, 120_000);
afterAll(async () => app?.close());

const roleBody = (slug: string, glob: string) => ({
  slug,
  name: slug,
  permissions: [{ subject: 'secrets', action: ['read'], conditions: { environment: 'dev', secretPath: { $glob: glob } } }],
});

describe("a role's secretPath glob", () => {
  test.each([
    ['12 repetitions', hostile(12), /more than 32 wildcards/],
    ['100 repetitions', hostile(100), /more than 32 wildcards/],
    ['an over-long glob', `/${'*a'.repeat(3000)}`, /at most 4096 characters|longer than 4096/],
    ['a negated extglob', '/!(app)', /'!\(…\)', which is not supported/],
    ['an unbalanced brace', '/{app,ops', /without a closing '}'/],
  ])('%s is refused with a 422 naming the field, and nothing changes', async (_name, glob, reason) => {
    const before = await snapshotDatabase(app.database);
    const response = await app.request('POST', `/api/v1/workspace/${fx.projectId}/roles`, { token: fx.token, body: roleBody('hostile', glob) });
    expect(response.status).toBe(422);
    expect(response.body).toMatchObject({ statusCode: 422, error: 'ValidationFailure', reqId: expect.any(String) });
    expect(response.body.message).toMatch(/^body\.permissions\.0\.conditions\.secretPath(\.\$glob)?: /);
    expect(response.body.message).toMatch(reason);
    expect(response.body.message).not.toContain('@(*|*)');
    expect(await snapshotDatabase(app.database)).toEqual(before);
  });

  test('a change of a role to a hostile glob is refused the same way', async () => {
    const created = await app.request('POST', `/api/v1/workspace/${fx.projectId}/roles`, { token: fx.token, body: roleBody('patched', '/app/**') });
    expect(created.status).toBe(200);
    const before = await snapshotDatabase(app.database);
    const patched = await app.request('PATCH', `/api/v1/workspace/${fx.projectId}/roles/${created.body.role.id}`, {
      token: fx.token,
      body: { permissions: roleBody('patched', hostile(12)).permissions },
    });
    expect(patched.status).toBe(422);
    expect(patched.body.message).toMatch(/^body\.permissions\.0\.conditions\.secretPath/);
    expect(await snapshotDatabase(app.database)).toEqual(before);
  });

  test.each([8, 9])('with %i repetitions it is kept, and its holder reading a deep path is answered at once and correctly', async (repetitions) => {
    const slug = `hostile-${repetitions}`;
    const created = await app.request('POST', `/api/v1/workspace/${fx.projectId}/roles`, { token: fx.token, body: roleBody(slug, hostile(repetitions)) });
    expect(created.status).toBe(200);
    const holder = await fx.identity(`holder-${repetitions}`, 'member', slug);
    await writeSecret(`DEEP_${repetitions}`, DEEP);
    // no folder name holds '!': the glob grants nothing, and says so without backtracking
    const read = await readSecret(holder.token, `DEEP_${repetitions}`, DEEP);
    expect(read.status).toBe(403);
    await serverStillAnswers(`AFTER_ROLE_${repetitions}`);
  });
});

describe("a privilege's secretPath glob", () => {
  test('past the bounds it is refused in both request shapes, and nothing changes', async () => {
    const target = await fx.identity('privileged', 'member', 'viewer');
    const before = await snapshotDatabase(app.database);
    const full = await app.request('POST', '/api/v1/additional-privilege/identity/permanent', {
      token: fx.token,
      body: { identityId: target.id, projectSlug: fx.projectSlug, permissions: roleBody('x', hostile(12)).permissions },
    });
    const shorthand = await app.request('POST', '/api/v1/additional-privilege/identity/permanent', {
      token: fx.token,
      body: {
        identityId: target.id,
        projectSlug: fx.projectSlug,
        privilegePermission: { actions: ['read'], subject: 'secrets', conditions: { environment: 'dev', secretPath: { $glob: hostile(12) } } },
      },
    });
    for (const response of [full, shorthand]) {
      expect(response.status).toBe(422);
      expect(response.body).toMatchObject({ error: 'ValidationFailure', message: expect.stringMatching(/secretPath.*more than 32 wildcards/) });
    }
    expect(await snapshotDatabase(app.database)).toEqual(before);
  });
});

describe("an event subscription's secretPath glob", () => {
  test.each([12, 100])('with %i repetitions it is refused with a 422 naming the field', async (repetitions) => {
    const stream = await subscribe(fx.token, {
      projectId: fx.projectId,
      register: [{ event: 'secret:update', conditions: { environmentSlug: 'dev', secretPath: hostile(repetitions) } }],
    });
    expect(stream.response.status).toBe(422);
    const body: any = await stream.response.json();
    expect(body).toMatchObject({ statusCode: 422, error: 'ValidationFailure', reqId: expect.any(String) });
    expect(body.message).toMatch(/^body\.register\.0\.conditions\.secretPath: the pattern has more than 32 wildcards/);
    expect(app.services.changeFanout.size).toBe(0);
  });

  test.each([8, 9])('with %i repetitions a viewer holds it; the next write, a bystander and another organization are answered', async (repetitions) => {
    const viewer = await fx.identity(`events-viewer-${repetitions}`, 'member', 'viewer');
    const conditions = (secretPath: string) => ({ environmentSlug: 'dev', secretPath });
    const hostileStream = await subscribe(viewer.token, {
      projectId: fx.projectId,
      register: [{ event: 'secret:update', conditions: conditions(hostile(repetitions)) }],
    });
    const bystander = await subscribe(fx.token, { projectId: fx.projectId, register: [{ event: 'secret:update', conditions: conditions(`${DEEP}/**`) }] });
    try {
      expect(hostileStream.response.status).toBe(200);
      expect(bystander.response.status).toBe(200);
      await serverStillAnswers(`AFTER_EVENTS_${repetitions}`);
      // the fan-out filters each change for every subscriber in one pass: once the bystander has it, the hostile glob has been asked
      await waitFor('the bystander to hear the write', () => bystander.paths.includes(DEEP));
      expect(hostileStream.paths).toEqual([]);
    } finally {
      hostileStream.close();
      bystander.close();
    }
  });

  test('a glob within the bounds still filters as before: braces, classes and extglobs', async () => {
    await fx.call('POST', '/api/v1/folders', { workspaceId: fx.projectId, environment: 'dev', path: '/', name: 'app' });
    await fx.call('POST', '/api/v1/folders', { workspaceId: fx.projectId, environment: 'dev', path: '/', name: 'ops' });
    const stream = await subscribe(fx.token, {
      projectId: fx.projectId,
      register: [{ event: 'secret:update', conditions: { environmentSlug: 'dev', secretPath: '/@(app|ops)' } }],
    });
    try {
      expect(stream.response.status).toBe(200);
      await writeSecret('SKIPPED', DEEP);
      await writeSecret('IN_APP', '/app');
      await writeSecret('IN_OPS', '/ops');
      await waitFor('both changes', () => stream.paths.length >= 2);
      expect(stream.paths).toEqual(['/app', '/ops']);
    } finally {
      stream.close();
    }
  });
});

describe('a glob stored before the bounds', () => {
  /** Writes a role's rules straight into the database, as a role created before the bounds holds them. */
  async function storedRole(slug: string, permissions: unknown[]) {
    const created = await app.request('POST', `/api/v1/workspace/${fx.projectId}/roles`, { token: fx.token, body: { slug, name: slug, permissions: [] } });
    expect(created.status).toBe(200);
    await app.database.db
      .updateTable('projectRoles')
      .set({ permissions: JSON.stringify(permissions) })
      .where('id', '=', created.body.role.id)
      .execute();
    return fx.identity(`${slug}-holder`, 'member', slug);
  }

  test('fails closed: a rule that grants grants nothing, a rule that forbids forbids at every path; the server answers at once', async () => {
    await writeSecret('STORED', DEEP);
    await fx.call('POST', '/api/v1/folders', { workspaceId: fx.projectId, environment: 'dev', path: '/', name: 'granted' });
    await writeSecret('GRANTED', '/granted');
    const readAll = { subject: 'secrets', action: ['read'] };
    const granting = await storedRole('stored-grant', [
      { ...readAll, conditions: { environment: 'dev', secretPath: { $glob: hostile(12) } } },
      { ...readAll, conditions: { environment: 'dev', secretPath: { $glob: '/granted' } } },
    ]);
    expect((await readSecret(granting.token, 'STORED', DEEP)).status).toBe(403);
    expect((await readSecret(granting.token, 'GRANTED', '/granted')).status).toBe(200);

    const forbidding = await storedRole('stored-forbid', [
      readAll,
      { ...readAll, inverted: true, conditions: { environment: 'dev', secretPath: { $glob: hostile(12) } } },
    ]);
    expect((await readSecret(forbidding.token, 'GRANTED', '/granted')).status).toBe(403);
    expect((await readSecret(forbidding.token, 'STORED', DEEP)).status).toBe(403);
    expect((await readSecret(forbidding.token, 'GRANTED', '/granted', fx.projectId)).body).toMatchObject({ error: 'PermissionDenied' });
    await serverStillAnswers('AFTER_STORED');
  });
});
