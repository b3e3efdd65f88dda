import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { Change } from '../../src/changes/change-feed.ts';
import { type Database, openDatabase } from '../../src/db/database.ts';
import { finishTransaction } from '../../src/db/statements.ts';
import { secretsFixture } from '../support/secrets-fixture.ts';
import { startTestApp, type TestApp } from '../support/test-app.ts';

// A write ends with one statement holding its audit rows and its change rows; on PostgreSQL it is sent with the
// COMMIT in one message, a script whose values are written into its text (db/statements.ts inlineValue), and the
// BEGIN goes with the transaction's first statement (db/postgres-pool.ts, db/begin-with-statement.ts).

let app: TestApp;
let fx: Awaited<ReturnType<typeof secretsFixture>>;

beforeAll(async () => {
  app = await startTestApp();
  fx = await secretsFixture(app, 'write-commit');
});
afterAll(async () => app?.close());

/** Text that would end a literal, escape out of one or run a statement of its own if it were not escaped. */
const HOSTILE = [
  "O'Reilly",
  "it''s",
  'back\\slash',
  "\\'; DROP TABLE change_log; --",
  "'); COMMIT; DELETE FROM audit_logs; --",
  "E'\\x41'",
  '$$ dollar $$',
  '$tag$ x $tag$',
  '"double" `back`',
  'ünïcødé ✓ 🎉',
  '\\u0000 as text',
  '\\\\\\',
  "'",
  '\\',
];
/** The same, and what a header cannot carry (line breaks, characters above U+00FF), where a field can. */
const HOSTILE_TEXT = [...HOSTILE, 'new\nline\ttab\rend'];

/** The audit rows of one event type, oldest first; the metadata as stored (read as text: the result plugin would camel-case its keys). */
async function auditRowsOf(eventType: string) {
  const rows = await app.database.db
    .selectFrom('auditLogs')
    .select(['userAgent', 'projectName', 'actor', 'ipAddress', sql<string>`event_metadata::text`.as('metadata')])
    .where('eventType', '=', eventType)
    .orderBy('sequence')
    .execute();
  return rows.map(({ metadata, ...row }) => ({ ...row, eventMetadata: JSON.parse(metadata) as Record<string, unknown> }));
}

describe('values that could escape a literal are stored exactly', () => {
  test('secrets with such keys, made by a caller with such a user agent in a project with such a name: audited and recorded as sent', async () => {
    const headerSafe = HOSTILE.filter((text) => /^[\x20-\x7e]*$/.test(text));
    const auditBefore = await app.database.db
      .selectFrom('auditLogs')
      .select((eb) => eb.fn.countAll<number>().as('count'))
      .executeTakeFirstOrThrow();
    const project = await app.request('POST', '/api/v2/workspace', { token: fx.token, body: { projectName: "Bobby'); DROP TABLE x; --\\", slug: 'hostile' } });
    expect(project.status).toBe(200);
    const projectId: string = project.body.project.id;
    for (const [index, key] of HOSTILE_TEXT.entries()) {
      const userAgent = headerSafe[index % headerSafe.length]!;
      const created = await app.request('POST', `/api/v3/secrets/raw/${encodeURIComponent(key)}`, {
        token: fx.token,
        body: { workspaceId: projectId, environment: 'dev', secretValue: `value ${index}` },
        headers: { 'user-agent': userAgent },
      });
      expect(created.status, key).toBe(200);
      const revision = Number(created.headers['coffer-revision']);
      const change = await app.database.db.selectFrom('changeLog').selectAll().where('revision', '=', revision).executeTakeFirstOrThrow();
      expect(change).toMatchObject({ projectId, environmentSlug: 'dev', secretPath: '/', kind: 'secret' });
      const read = await app.request('GET', `/api/v3/secrets/raw/${encodeURIComponent(key)}`, { token: fx.token, query: { workspaceId: projectId, environment: 'dev' } });
      expect(read.body.secret).toMatchObject({ secretKey: key, secretValue: `value ${index}` });
    }
    const audited = (await auditRowsOf('create-secret')).filter((row) => (row.eventMetadata as { secretPath: string }).secretPath === '/').slice(-HOSTILE_TEXT.length);
    expect(audited.map((row) => (row.eventMetadata as { secretKey: string }).secretKey)).toEqual(HOSTILE_TEXT);
    expect(audited.map((row) => row.userAgent)).toEqual(HOSTILE_TEXT.map((_, index) => headerSafe[index % headerSafe.length]));
    expect(new Set(audited.map((row) => row.projectName))).toEqual(new Set(["Bobby'); DROP TABLE x; --\\"]));
    // nothing was deleted or dropped: every earlier row is still there, and more
    const auditAfter = await app.database.db
      .selectFrom('auditLogs')
      .select((eb) => eb.fn.countAll<number>().as('count'))
      .executeTakeFirstOrThrow();
    expect(Number(auditAfter.count)).toBeGreaterThanOrEqual(Number(auditBefore.count) + 1 + HOSTILE_TEXT.length);
  });

  /** Writes audit and change rows holding the text through `database` as a write ends, and reads them back. */
  async function roundTrip(database: Database, eventType: string) {
    const environmentId = (await app.database.db.selectFrom('projectEnvironments').select('id').where('projectId', '=', fx.projectId).executeTakeFirstOrThrow()).id;
    const changes: Change[] = HOSTILE_TEXT.map((text) => ({ projectId: fx.projectId, environmentId, environmentSlug: text, secretPath: `/${text}`, kind: 'secret' }));
    const entries = HOSTILE_TEXT.map((text) => ({
      author: { ip: text, userAgent: text, userAgentType: 'other' as const },
      scope: { orgId: fx.orgId, projectId: fx.projectId, projectName: text },
      event: { type: eventType, metadata: { [text]: text, nested: [text, { text }] } },
    }));
    const rows = await database.db
      .transaction()
      .execute((trx) =>
        finishTransaction(trx, [app.services.audit.insertion(entries), app.services.changes.insertion(changes, { quiet: true })], { script: database.scriptCommits }),
      );
    expect(rows).toHaveLength(HOSTILE_TEXT.length);
    const recorded = await app.database.db
      .selectFrom('changeLog')
      .select(['environmentSlug', 'secretPath'])
      .where(
        'revision',
        'in',
        rows.map((row) => row.revision),
      )
      .orderBy('revision')
      .execute();
    expect(recorded).toEqual(HOSTILE_TEXT.map((text) => ({ environmentSlug: text, secretPath: `/${text}` })));
    expect(await auditRowsOf(eventType)).toEqual(
      HOSTILE_TEXT.map((text) => ({
        actor: 'unknownUser',
        ipAddress: text,
        userAgent: text,
        projectName: text,
        eventMetadata: { [text]: text, nested: [text, { text }] },
      })),
    );
  }

  test('audit and change rows with such text in every text field, written as a write ends them, read back unchanged', async () => {
    await roundTrip(app.database, 'hostile-text');
  });

  // A backslash escapes a quote in a literal when standard_conforming_strings is off (a DATABASE_URL's options can
  // set it): doubling quotes alone would then let the text end the literal.
  test('the same on a PostgreSQL connection with standard_conforming_strings off', async () => {
    if (!app.databaseUrl) return; // PGlite: every value is bound
    const url = new URL(app.databaseUrl);
    url.searchParams.set('options', '-c standard_conforming_strings=off');
    const database = await openDatabase({ databaseUrl: url.toString(), dataDir: '', poolSize: 1 });
    try {
      const { rows } = await sql<{ setting: string }>`SHOW standard_conforming_strings`.execute(database.db);
      expect(rows).toEqual([{ standardConformingStrings: 'off' }]);
      await roundTrip(database, 'hostile-text-nonstandard');
    } finally {
      await database.close();
    }
  });
});

describe("a transaction's ends sent with its statements", () => {
  let single: Database;
  const APPLICATION = 'coffer-write-commit-test';

  beforeAll(async () => {
    // PostgreSQL: a pool of one connection, so every transaction below runs on the same one
    single = app.databaseUrl ? await openDatabase({ databaseUrl: app.databaseUrl, dataDir: '', poolSize: 1, applicationName: APPLICATION }) : app.database;
  });
  afterAll(async () => {
    if (single !== app.database) await single?.close();
  });

  const note = (marker: string) =>
    app.services.audit.insertion([
      { author: { ip: null, userAgent: marker, userAgentType: 'other' }, scope: { orgId: fx.orgId }, event: { type: 'transaction-end', metadata: {} } },
    ]);
  const noted = async (marker: string) => (await auditRowsOf('transaction-end')).filter((row) => row.userAgent === marker).length;
  /** PostgreSQL: whether the one connection is back to idle, no transaction left open on it. */
  const idle = async () => {
    if (single === app.database) return true;
    const { rows } = await sql<{ state: string }>`SELECT state FROM pg_stat_activity WHERE application_name = ${APPLICATION}`.execute(app.database.db);
    return rows.every((row) => row.state === 'idle');
  };

  test('a transaction whose last statement fails keeps nothing, and the connection commits the next one', async () => {
    const failing = single.db.transaction().execute(async (trx) => {
      await finishTransaction(trx, [note('rolled-back')], { script: false });
      const invalid: Change = { projectId: 'not-a-uuid', environmentId: null, environmentSlug: null, secretPath: null, kind: 'secret' };
      await finishTransaction(trx, [note('rolled-back'), app.services.changes.insertion([invalid], { quiet: true })], { script: single.scriptCommits });
    });
    await expect(failing).rejects.toThrow(/uuid/);
    expect(await noted('rolled-back')).toBe(0);
    expect(await idle()).toBe(true);
    const rows = await single.db.transaction().execute(async (trx) => {
      // a first statement with parameters: its BEGIN goes with it, in the extended protocol's messages
      await trx.selectFrom('projects').select('id').where('id', '=', fx.projectId).execute();
      const change: Change = { projectId: fx.projectId, environmentId: null, environmentSlug: null, secretPath: null, kind: 'access' };
      return finishTransaction(trx, [note('committed'), app.services.changes.insertion([change], { quiet: true })], { script: single.scriptCommits });
    });
    expect(await noted('committed')).toBe(1);
    expect(await app.database.db.selectFrom('changeLog').select('kind').where('revision', '=', rows[0]!.revision).executeTakeFirst()).toEqual({ kind: 'access' });
    expect(await idle()).toBe(true);
  });

  test('an empty transaction, one that only reads, and one that ends with its audit rows alone each commit and leave the connection idle', async () => {
    expect(await single.db.transaction().execute(async () => 'nothing sent')).toBe('nothing sent');
    expect(await idle()).toBe(true);
    const read = await single.db.transaction().execute((trx) => sql<{ one: number }>`SELECT 1 AS one`.execute(trx));
    expect(read.rows).toEqual([{ one: 1 }]);
    expect(await idle()).toBe(true);
    const before = single.roundTrips();
    await single.db.transaction().execute(async (trx) => {
      await sql`SELECT 1`.execute(trx);
      await finishTransaction(trx, [note('alone')], { script: single.scriptCommits });
    });
    // PostgreSQL: BEGIN with the read, the audit row with the COMMIT; PGlite: its two statements
    expect(single.roundTrips() - before).toBe(2);
    expect(await noted('alone')).toBe(1);
    expect(await idle()).toBe(true);
  });
});
