import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, test } from 'vitest';
import { openDatabase } from '../../src/db/database.ts';
import { SIGNATURE_HEADER, verifyDelivery } from '../../src/outbound/delivery-signature.ts';
import { callCoffer, type CofferProcess, startCoffer, stopCoffer } from '../support/coffer-process.ts';
import { Receiver } from '../support/http-receiver.ts';
import { adminQuery, databaseUrl } from '../support/postgres-server.ts';

/**
 * Audit log streams lose nothing across a kill -9 of Coffer (issue 33 part 4): the built `coffer serve` streams to a
 * receiver, is killed with SIGKILL while a delivery waits for its answer, and is started again; the receiver ends up
 * with every audit row of the database from the stream's creation on, in order. Requires `npm run build`.
 */

const backends = [
  {
    name: 'the embedded database',
    async setup() {
      const dataDir = mkdtempSync(join(tmpdir(), 'coffer-stream-crash-'));
      return {
        env: { COFFER_DATA_DIR: dataDir, DATABASE_URL: '' },
        open: () => openDatabase({ dataDir }),
        cleanup: async () => rmSync(dataDir, { recursive: true, force: true }),
      };
    },
  },
  {
    name: 'PostgreSQL',
    async setup() {
      const adminUrl = inject('postgresAdminUrl');
      const name = `${inject('postgresRunPrefix')}_stream_${randomBytes(4).toString('hex')}`;
      await adminQuery(adminUrl, `CREATE DATABASE ${name}`);
      const url = databaseUrl(adminUrl, name);
      const keys = { COFFER_ENCRYPTION_KEY: randomBytes(32).toString('base64'), COFFER_AUTH_SECRET: randomBytes(48).toString('base64') };
      return {
        env: { DATABASE_URL: url, ...keys },
        open: () => openDatabase({ databaseUrl: url, dataDir: '' }),
        cleanup: async () => void (await adminQuery(adminUrl, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)),
      };
    },
  },
];

const linesOf = (receiver: Receiver) =>
  receiver.received.flatMap((entry) =>
    entry.body
      .trimEnd()
      .split('\n')
      .map((line) => (JSON.parse(line) as { id: string }).id),
  );

describe.each(backends)('on $name', (backend) => {
  const receiver = new Receiver();
  let setup: Awaited<ReturnType<(typeof backends)[number]['setup']>>;
  let server: CofferProcess | undefined;

  beforeAll(async () => {
    if (!existsSync(join(import.meta.dirname, '../../dist/main.js'))) throw new Error('dist/ is missing: run `npm run build` first');
    setup = await backend.setup();
    await receiver.start();
  });
  afterAll(async () => {
    if (server) await stopCoffer(server, 'SIGKILL');
    await receiver.stop();
    await setup?.cleanup();
  });

  test('a receiver gets every audit row, in order, signed, although Coffer was killed with SIGKILL mid-delivery', { timeout: 180_000 }, async () => {
    const env = { ...setup.env, COFFER_OPERATOR: 'false' };
    server = await startCoffer(env);
    const boot = await callCoffer(server, 'POST', '/api/v1/admin/bootstrap', undefined, {
      email: 'admin@example.com',
      password: 'correct horse battery',
      organization: 'Acme',
    });
    const token: string = boot.body.identity.credentials.token;
    const stream = await callCoffer(server, 'POST', '/api/v1/audit-log-streams', token, { url: receiver.url });
    expect(stream.status).toBe(200);
    const signingKey: string = stream.body.signingKey;
    const project = await callCoffer(server, 'POST', '/api/v2/workspace', token, { projectName: 'Crash' });
    const workspaceId: string = project.body.project.id;
    const write = (target: CofferProcess, key: string) =>
      callCoffer(target, 'POST', `/api/v3/secrets/raw/${key}`, token, { workspaceId, environment: 'dev', secretPath: '/', secretValue: 'v' });

    // writes keep coming; once deliveries flow, the receiver stops answering and Coffer is killed while one waits
    let writing = true;
    const writes = (async () => {
      for (let n = 0; writing; n++) await write(server, `BEFORE_${n}`).catch(() => (writing = false));
    })();
    await receiver.waitFor(2);
    receiver.answer = 'silent';
    const unanswered = receiver.received.length + 1;
    await receiver.waitFor(unanswered);
    expect(await stopCoffer(server, 'SIGKILL')).toBeNull();
    await writes;
    receiver.answer = 204;

    server = await startCoffer(env);
    for (let n = 0; n < 3; n++) expect((await write(server, `AFTER_${n}`)).status).toBe(200);
    const exported = async () =>
      ((await callCoffer(server!, 'GET', '/api/v1/organization/audit-logs', token, undefined)).body.auditLogs as { id: string }[]).map((entry) => entry.id);
    // positive event: the entries of the writes after the restart arrive (the newest export entry is one of them)
    const newest = (await exported())[0]!;
    const deadline = Date.now() + 60_000;
    while (!linesOf(receiver).includes(newest)) {
      if (Date.now() > deadline) throw new Error('the entries written after the restart never arrived');
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(await stopCoffer(server, 'SIGTERM')).toBe(0);
    server = undefined;

    const database = await setup.open();
    try {
      const rows = await database.db.selectFrom('auditLogs').select(['id', 'eventType', 'xact', 'sequence']).orderBy('xact').orderBy('sequence').execute();
      const first = rows.findIndex((row) => row.eventType === 'create-audit-log-stream');
      const expected = rows.slice(first).map((row) => row.id);
      const received = linesOf(receiver);
      // every row, none skipped; in order once repeats (the batch Coffer was killed waiting on) are dropped
      expect(new Set(received)).toEqual(new Set(expected));
      expect([...new Set(received)]).toEqual(expected);
      expect(received.length).toBeGreaterThan(expected.length);
      expect(rows.length - first).toBeGreaterThan(10);
    } finally {
      await database.close();
    }
    for (const entry of receiver.received) expect(verifyDelivery(signingKey, String(entry.headers[SIGNATURE_HEADER]), entry.body, Date.now())).toBe(true);
  });
});
