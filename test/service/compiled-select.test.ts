import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { compiledSelect } from '../../src/db/compiled-select.ts';
import { changesAfter } from '../../src/changes/change-store.ts';
import { lockProject } from '../../src/projects/project-store.ts';
import { bootstrap, startTestApp, type TestApp } from '../support/test-app.ts';

/**
 * A select compiled once and sent again with the values of each call (db/compiled-select.ts) answers what the same
 * query built and compiled afresh answers, for every value, in a transaction and outside one; a build it cannot
 * compile once is refused the first time it runs.
 */
let app: TestApp;
const projectIds: string[] = [];

beforeAll(async () => {
  app = await startTestApp();
  const { token } = await bootstrap(app);
  for (const name of ['Compiled one', 'Compiled two']) {
    const created = await app.request('POST', '/api/v2/workspace', { token, body: { projectName: name } });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    projectIds.push(created.body.project.id);
  }
  // change rows to read
  for (const key of ['FIRST', 'SECOND', 'THIRD']) {
    const body = { workspaceId: projectIds[0], environment: 'dev', secretValue: `value of ${key}` };
    expect((await app.request('POST', `/api/v3/secrets/raw/${key}`, { token, body })).status).toBe(200);
  }
});
afterAll(() => app?.close());

const freshlyCompiled = {
  project: (id: string) => app.database.db.selectFrom('projects').selectAll().where('id', '=', id).executeTakeFirst(),
  changes: (revision: number, limit: number) =>
    app.database.db
      .selectFrom('changeLog')
      .select(['revision', 'projectId', 'environmentId', 'environmentSlug', 'secretPath', 'kind', 'rotation', 'createdAt'])
      .where('revision', '>', revision)
      .orderBy('revision')
      .limit(limit)
      .execute(),
};

describe('compiled once, sent with each call’s values', () => {
  test('each project’s lock answers that project, as a fresh query does; an unknown one answers nothing', async () => {
    for (const id of [...projectIds, ...[...projectIds].reverse()]) {
      const locked = await app.database.db.transaction().execute((trx) => lockProject(trx, id));
      expect(locked).toEqual(await freshlyCompiled.project(id));
      expect(locked!.id).toBe(id);
    }
    expect(await app.database.db.transaction().execute((trx) => lockProject(trx, '00000000-0000-4000-8000-000000000000'))).toBeUndefined();
  });

  test('the change log after each revision, each limit, as a fresh query reads it', async () => {
    const all = await freshlyCompiled.changes(0, 1000);
    expect(all.length).toBeGreaterThan(2);
    for (const [after, limit] of [
      [0, 1000],
      [0, 1],
      [all[1]!.revision, 2],
      [all.at(-1)!.revision, 10],
    ] as const) {
      expect(await changesAfter(app.database.db, after, limit)).toEqual(await freshlyCompiled.changes(after, limit));
    }
  });

  test('a build that is not a SELECT, or that writes a value into its text, is refused when it first runs', async () => {
    const literal = compiledSelect((db, _name: string) => db.selectFrom('projects').select('id').where('name', '=', sql.lit('Compiled one')));
    await expect(literal(app.database.db, 'Compiled one')).rejects.toThrow('must put each of its 1 values in as a parameter (0 are)');
    const update = compiledSelect(
      (db, id: string) => (db as never as typeof app.database.db).updateTable('projects').set({ name: 'renamed' }).where('id', '=', id) as never,
    );
    await expect(update(app.database.db, projectIds[0]!)).rejects.toThrow('a compiled select must be a SELECT, not a UpdateQueryNode');
    expect((await freshlyCompiled.project(projectIds[0]!))!.name).not.toBe('renamed');
  });
});
