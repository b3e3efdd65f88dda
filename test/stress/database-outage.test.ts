import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { ChangeFeed } from '../../src/changes/change-feed.ts';
import { ChangeSubscriber } from '../../src/changes/change-subscriber.ts';
import { type Database, openDatabase } from '../../src/db/database.ts';
import { type CofferProcess, callCoffer, startCoffer, stopCoffer } from '../support/coffer-process.ts';
import { type PrivatePostgres, startPrivatePostgres } from '../support/private-postgres.ts';

/**
 * The built `coffer serve` on a PostgreSQL server of the test's own, under
 * write load, while that server is stopped for 10 s at a time (a fast
 * shutdown, then a crash-like immediate one, then fast again). The process
 * must survive without a restart, answer 503 with Retry-After while the
 * database is away, follow it with /readyz, and lose no write it answered
 * 200 to. A change-feed subscriber in this process must catch up on every
 * revision, exactly once and in order.
 */
const OUTAGES: ('fast' | 'immediate')[] = ['fast', 'immediate', 'fast'];
const OUTAGE_MS = 10_000;
const WRITERS = 4;

interface Answer {
  status: number;
  retryAfter: string | null;
  body: any;
  at: number;
  tookMs: number;
}

let postgres: PrivatePostgres;
let server: CofferProcess;
let token: string;
let projectId: string;
let feedDatabase: Database;

beforeAll(async () => {
  if (!existsSync(join(import.meta.dirname, '../../dist/main.js'))) throw new Error('dist/ is missing: run `npm run build` first');
  postgres = await startPrivatePostgres();
  server = await startCoffer({
    DATABASE_URL: postgres.url,
    COFFER_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
    COFFER_AUTH_SECRET: randomBytes(48).toString('base64'),
    COFFER_OPERATOR: 'false',
    COFFER_DB_CONNECT_TIMEOUT: '2s',
    COFFER_LOG_LEVEL: 'warn',
  });
  const boot = await callCoffer(server, 'POST', '/api/v1/admin/bootstrap', undefined, {
    email: 'admin@example.com',
    password: 'correct horse battery',
    organization: 'Acme',
  });
  token = boot.body.identity.credentials.token;
  projectId = (await callCoffer(server, 'POST', '/api/v2/workspace', token, { projectName: 'Outage' })).body.project.id;
  feedDatabase = await openDatabase({ databaseUrl: postgres.url, dataDir: '', poolSize: 2, connectTimeoutMs: 2_000 });
}, 180_000);

afterAll(async () => {
  if (server) await stopCoffer(server);
  await feedDatabase?.close().catch(() => {});
  await postgres?.destroy();
});

async function write(name: string): Promise<Answer> {
  const sentAt = Date.now();
  const response = await fetch(`${server.api}/api/v3/secrets/raw/${name}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ workspaceId: projectId, environment: 'dev', secretValue: `value of ${name}` }),
    signal: AbortSignal.timeout(60_000),
  });
  const text = await response.text();
  return {
    status: response.status,
    retryAfter: response.headers.get('retry-after'),
    body: text ? JSON.parse(text) : undefined,
    at: Date.now(),
    tookMs: Date.now() - sentAt,
  };
}

async function readiness(): Promise<number> {
  const response = await fetch(`${server.probes}/readyz`, { signal: AbortSignal.timeout(30_000) });
  await response.arrayBuffer();
  return response.status;
}

async function until(description: string, check: () => Promise<boolean>, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check().catch(() => false)) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`timed out waiting for ${description}\n${server.output.join('').slice(-3000)}`);
}

test('survives repeated PostgreSQL outages under write load: 503 + Retry-After, readiness follows, no acknowledged write lost', async () => {
  const feed = new ChangeFeed();
  const startRevision = await feed.latestRevision(feedDatabase.db);
  const delivered: number[] = [];
  const subscriber = new ChangeSubscriber(feedDatabase, feed, {
    after: startRevision,
    pollIntervalMs: 60_000,
    onChanges: async (changes) => void delivered.push(...changes.map((change) => change.revision)),
  });
  await subscriber.start();

  const answers: Answer[] = [];
  const failures: string[] = [];
  const acknowledged: string[] = [];
  let loading = true;
  const writers = Array.from({ length: WRITERS }, async (_, writer) => {
    for (let n = 0; loading; n++) {
      const name = `W${writer}_${n}`;
      try {
        const answer = await write(name);
        answers.push(answer);
        if (answer.status === 200) acknowledged.push(name);
        // pacing, not a wait: a refused writer pauses before its next write, as a client would
        else await new Promise((resolve) => setTimeout(resolve, 50));
      } catch (error) {
        failures.push(`${name}: ${(error as Error).message}`);
      }
    }
  });

  const outages: { stoppedAt: number; startedAt: number; unavailable: Answer[]; readyDuring: number[] }[] = [];
  for (const mode of OUTAGES) {
    await until('a write to succeed before the outage', async () => answers.some((answer) => answer.status === 200 && answer.at > Date.now() - 1_000));
    const stoppedAt = Date.now();
    await postgres.stop(mode);
    const readyDuring: number[] = [];
    // While the server is away: readiness fails, writes answer 503.
    await until('an API 503 during the outage', async () => answers.some((answer) => answer.at > stoppedAt && answer.status === 503));
    while (Date.now() < stoppedAt + OUTAGE_MS) {
      readyDuring.push(await readiness());
      // fixed sleep: the outage lasts OUTAGE_MS (its length is the subject); readiness is sampled every 0.5 s meanwhile
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    await postgres.start();
    const startedAt = Date.now();
    await until('readiness to come back', async () => (await readiness()) === 200);
    await until('a write to succeed after the outage', async () => answers.some((answer) => answer.status === 200 && answer.at > startedAt));
    const readyAt = Date.now();
    outages.push({ stoppedAt, startedAt, unavailable: answers.filter((answer) => answer.at > stoppedAt && answer.at < startedAt), readyDuring });
    const unavailable = outages.at(-1)!.unavailable;
    // figures for bench/RESULTS.md; not asserted (timings depend on the machine)
    console.log(
      `outage (${mode}, ${OUTAGE_MS / 1000} s): ${unavailable.filter((answer) => answer.status === 503).length} × 503, ` +
        `slowest answer ${Math.max(...unavailable.map((answer) => answer.tookMs))} ms, readiness 503 × ${readyDuring.length}, ` +
        `ready again ${readyAt - startedAt} ms after the server accepted connections`,
    );
  }
  loading = false;
  await Promise.all(writers);

  // The process never died nor restarted.
  expect(server.process.exitCode).toBeNull();
  expect(server.process.signalCode).toBeNull();
  expect(failures).toEqual([]);

  // Only 200 and 503 were answered; every 503 said when to retry, in the documented shape.
  expect(new Set(answers.map((answer) => answer.status))).toEqual(new Set([200, 503]));
  for (const answer of answers.filter((candidate) => candidate.status === 503)) {
    expect(answer.retryAfter).toMatch(/^\d+$/);
    expect(answer.body).toEqual({ statusCode: 503, error: 'ServiceUnavailable', code: 'ServiceUnavailable', message: expect.any(String), reqId: expect.any(String) });
  }
  for (const outage of outages) {
    expect(outage.unavailable.filter((answer) => answer.status === 503).length).toBeGreaterThan(0);
    expect(outage.readyDuring.length).toBeGreaterThan(0);
    expect(outage.readyDuring.every((status) => status === 503)).toBe(true);
  }

  // Every write answered 200 is in the database.
  const client = new pg.Client({ connectionString: postgres.url });
  await client.connect();
  try {
    const stored = await client.query<{ key: string }>('SELECT key FROM secrets WHERE key = ANY($1::text[])', [acknowledged]);
    expect(stored.rows.map((row) => row.key).sort()).toEqual([...acknowledged].sort());
    expect(acknowledged.length).toBeGreaterThan(OUTAGES.length * WRITERS);

    // The subscriber caught up by revision, each change once and in order.
    const { rows } = await client.query<{ revision: string }>('SELECT revision FROM change_log WHERE revision > $1 ORDER BY revision', [startRevision]);
    const committed = rows.map((row) => Number(row.revision));
    await until('the change subscriber to catch up', async () => delivered.length >= committed.length);
    expect(delivered).toEqual(committed);
  } finally {
    await client.end();
    await subscriber.stop();
  }
}, 300_000);
