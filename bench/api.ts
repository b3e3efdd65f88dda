/**
 * API throughput and latency: list 100 secrets, get one, create, update, each with 1, 16 and 64
 * concurrent clients (autocannon, in this process) against `coffer serve` (the built binary) as a
 * separate process; then the same list read straight through the driver (SQL, and SQL + decryption)
 * for the ceiling the API is compared with.
 *
 *   npm run bench:api            PostgreSQL (a fresh database on BENCH_DATABASE_URL's server, default 127.0.0.1:5432)
 *   npm run bench:api:pglite     embedded PGlite (a fresh data directory)
 *
 * Options: --duration <s> per cell (default 10), --clients 1,16,64, --only list,get,create,update,
 * --no-sql; BENCH_CPU_PROF=<dir> runs the server with --cpu-prof into that directory.
 */
import { createSecretKey } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { CamelCasePlugin, Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import { open } from '../src/crypto/aead.ts';
import { Keyring } from '../src/crypto/keyring.ts';
import { type Database, openDatabase } from '../src/db/database.ts';
import type { DB } from '../src/db/schema.ts';
import { listSecretsOfFolders } from '../src/secrets/secret-store.ts';
import {
  appendResults,
  bootstrapWithMember,
  call,
  freshDatabase,
  loadAverage,
  log,
  machine,
  ms,
  percentile,
  postgresVersion,
  serverKeys,
  startServer,
  table,
} from './common.ts';

const { values: args } = parseArgs({
  options: {
    backend: { type: 'string', default: 'postgres' },
    duration: { type: 'string', default: '10' },
    clients: { type: 'string', default: '1,16,64' },
    only: { type: 'string' },
    'no-sql': { type: 'boolean', default: false },
  },
});
const backend = args.backend === 'pglite' ? 'pglite' : 'postgres';
const duration = Number(args.duration);
const clientCounts = args.clients.split(',').map(Number);
const SECRETS = 100;

interface Cell {
  scenario: string;
  clients: number;
  rps: number;
  p50: number;
  p99: number;
  errors: number;
}

async function main() {
  const keys = serverKeys();
  const database = backend === 'postgres' ? await freshDatabase('api') : undefined;
  const dataDir = backend === 'pglite' ? mkdtempSync(join(os.tmpdir(), 'coffer-bench-')) : undefined;
  const storage = backend === 'postgres' ? `${await postgresVersion()} (local, fresh database)` : 'embedded PGlite (fresh data directory on local disk)';
  const env: Record<string, string> = {
    ...keys,
    COFFER_OPERATOR: 'false',
    COFFER_LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'info',
    ...(database ? { DATABASE_URL: database.url } : { COFFER_DATA_DIR: dataDir! }),
  };
  const profileDir = process.env.BENCH_CPU_PROF;
  const server = await startServer(env, { nodeArgs: profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : [] });
  const cells: Cell[] = [];
  let sql: Cell[] = [];
  try {
    const { projectId, memberToken } = await bootstrapWithMember(server, 'Bench API');
    const secrets = Array.from({ length: SECRETS }, (_, index) => ({
      secretKey: `KEY_${String(index).padStart(3, '0')}`,
      secretValue: `value-${index}-${'x'.repeat(40)}`,
      secretComment: index % 2 === 0 ? `comment ${index}` : undefined,
    }));
    await call(server, 'POST', '/api/v3/secrets/batch/raw', memberToken, { workspaceId: projectId, environment: 'dev', secretPath: '/', secrets });
    const listed = await call(server, 'GET', `/api/v3/secrets/raw?workspaceId=${projectId}&environment=dev&secretPath=/`, memberToken);
    if (listed.secrets.length !== SECRETS) throw new Error(`expected ${SECRETS} secrets, listed ${listed.secrets.length}`);
    const headers = { authorization: `Bearer ${memberToken}`, 'content-type': 'application/json' };
    const query = `workspaceId=${projectId}&environment=dev&secretPath=/`;
    let created = 0;
    let updated = 0;
    const scenarios: { name: string; request: autocannon.Request }[] = [
      { name: 'list 100', request: { method: 'GET', path: `/api/v3/secrets/raw?${query}` } },
      { name: 'get one', request: { method: 'GET', path: `/api/v3/secrets/raw/KEY_042?${query}` } },
      {
        name: 'create',
        request: {
          method: 'POST',
          setupRequest: (request) => ({
            ...request,
            path: `/api/v3/secrets/raw/NEW_${process.pid}_${created++}`,
            body: JSON.stringify({ workspaceId: projectId, environment: 'staging', secretPath: '/', secretValue: `created-${created}` }),
          }),
        },
      },
      {
        name: 'update',
        request: {
          method: 'PATCH',
          setupRequest: (request) => {
            const index = updated++ % SECRETS;
            return {
              ...request,
              path: `/api/v3/secrets/raw/KEY_${String(index).padStart(3, '0')}`,
              body: JSON.stringify({ workspaceId: projectId, environment: 'dev', secretPath: '/', secretValue: `updated-${updated}` }),
            };
          },
        },
      },
    ];
    log(`warm-up (3 s, list 100, 16 clients)`);
    await load(server.api, headers, scenarios[0]!.request, 16, 3);
    for (const scenario of scenarios) {
      if (args.only && !args.only.split(',').includes(scenario.name.split(' ')[0]!)) continue;
      for (const clients of clientCounts) {
        const result = await load(server.api, headers, scenario.request, clients, duration);
        cells.push({ scenario: scenario.name, clients, ...result });
        log(`${scenario.name} × ${clients}: ${result.rps.toFixed(0)} req/s, p50 ${ms(result.p50)} ms, p99 ${ms(result.p99)} ms, errors ${result.errors}`);
      }
    }
  } finally {
    await server.stop();
  }
  try {
    if (!args['no-sql']) sql = await sqlCeiling(backend, database?.url, dataDir, keys.COFFER_ENCRYPTION_KEY!);
  } finally {
    await database?.drop();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  }
  report(storage, cells, sql);
}

async function load(url: string, headers: Record<string, string>, request: autocannon.Request, connections: number, seconds: number) {
  const result = await autocannon({ url, connections, duration: seconds, headers, requests: [request], timeout: 30 });
  const errors = result.errors + result.timeouts + result.non2xx;
  return { rps: result.requests.total / (result.duration || seconds), p50: result.latency.p50, p99: result.latency.p99, errors };
}

/**
 * The list read without the API: the same SELECT through the same driver (Kysely over pg, or
 * PGlite in this process after the server stopped), alone and with decrypting every value and
 * comment, with as many concurrent workers as the API had clients.
 */
async function sqlCeiling(which: 'postgres' | 'pglite', url: string | undefined, dataDir: string | undefined, rootKey: string): Promise<Cell[]> {
  let database: Database | undefined;
  let db: Kysely<DB>;
  if (which === 'postgres') {
    const pool = new pg.Pool({ connectionString: url, max: 10 });
    pool.on('error', () => {});
    db = new Kysely<DB>({ dialect: new PostgresDialect({ pool }), plugins: [new CamelCasePlugin()] });
  } else {
    database = await openDatabase({ dataDir: dataDir! });
    db = database.db;
  }
  const cells: Cell[] = [];
  try {
    const project = await db.selectFrom('projects').selectAll().where('name', '=', 'Bench API').executeTakeFirstOrThrow();
    const folder = await db
      .selectFrom('secretFolders')
      .innerJoin('projectEnvironments', 'projectEnvironments.id', 'secretFolders.envId')
      .select('secretFolders.id')
      .where('projectEnvironments.projectId', '=', project.id)
      .where('projectEnvironments.slug', '=', 'dev')
      .where('secretFolders.parentId', 'is', null)
      .executeTakeFirstOrThrow();
    // AES-GCM on every value, as a first read does (the server keeps what it decrypted; this does not).
    const dataKey = createSecretKey(new Keyring(Buffer.from(rootKey, 'base64')).projectKey(project.id, project.encryptedDataKey!));
    const decrypt = (id: string, part: string, blob: Buffer | null) => blob && open(dataKey, blob, `coffer:secret:${id}:${part}`);
    const select = async () => {
      const rows = await listSecretsOfFolders(db, [folder.id], null);
      if (rows.length !== SECRETS) throw new Error(`SQL read ${rows.length} rows`);
      return rows;
    };
    const selectAndDecrypt = async () => {
      for (const row of await select()) {
        decrypt(row.id, 'value', row.encryptedValue);
        decrypt(row.id, 'comment', row.encryptedComment);
      }
    };
    await loop(select, 16, 2);
    for (const [name, work] of [
      ['SQL select 100', select],
      ['SQL select 100 + decrypt', selectAndDecrypt],
    ] as const) {
      for (const clients of clientCounts) {
        const result = await loop(work, clients, duration);
        cells.push({ scenario: name, clients, ...result });
        log(`${name} × ${clients}: ${result.rps.toFixed(0)} req/s, p50 ${ms(result.p50)} ms, p99 ${ms(result.p99)} ms`);
      }
    }
  } finally {
    if (database) await database.close();
    else await db.destroy();
  }
  return cells;
}

async function loop(work: () => Promise<unknown>, workers: number, seconds: number) {
  const latencies: number[] = [];
  const end = performance.now() + seconds * 1000;
  let errors = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: workers }, async () => {
      while (performance.now() < end) {
        const start = performance.now();
        try {
          await work();
          latencies.push(performance.now() - start);
        } catch {
          errors++;
        }
      }
    }),
  );
  const elapsed = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  return { rps: latencies.length / elapsed, p50: percentile(latencies, 50), p99: percentile(latencies, 99), errors };
}

function report(storage: string, cells: Cell[], sql: Cell[]) {
  const at = (list: Cell[], scenario: string, clients: number) => list.find((cell) => cell.scenario === scenario && cell.clients === clients);
  const check = (ok: boolean | undefined) => (ok === undefined ? 'n/a' : ok ? '✅ met' : '❌ missed');
  const list16 = at(cells, 'list 100', 16);
  const sql16 = at(sql, 'SQL select 100', 16);
  const sqlDecrypt16 = at(sql, 'SQL select 100 + decrypt', 16);
  const ratio = list16 && sql16 ? list16.rps / sql16.rps : undefined;
  const ratioDecrypt = list16 && sqlDecrypt16 ? list16.rps / sqlDecrypt16.rps : undefined;
  const rows = [...cells, ...sql].map((cell) => {
    const sqlCell = cell.scenario === 'list 100' ? at(sql, 'SQL select 100', cell.clients) : undefined;
    return [cell.scenario, cell.clients, cell.rps.toFixed(0), ms(cell.p50), ms(cell.p99), cell.errors, sqlCell ? (cell.rps / sqlCell.rps).toFixed(2) : ''];
  });
  appendResults(`API (${backend === 'postgres' ? 'PostgreSQL' : 'embedded PGlite'})`, [
    `Machine: ${machine(storage)}. Load average before/after (1/5/15 min): ${loadAtStart} → ${loadAverage()}.`,
    `Server: \`coffer serve\` (built), log level ${process.env.BENCH_LOG_LEVEL ?? 'info'}, operator off; caller: a machine identity (org member, project role member) logged in with universal auth; ${duration} s per cell, autocannon in the bench process, 127.0.0.1. SQL rows: the same SELECT as the list (Kysely over ${backend === 'postgres' ? 'pg, pool of 10' : 'PGlite, in the bench process after the server stopped'}), with N concurrent workers.`,
    '',
    ...table(['scenario', 'clients', 'req/s', 'p50 ms', 'p99 ms', 'errors', 'API/SQL'], rows),
    '',
    `Targets (16 clients): list 100 ≥ 2,000 req/s: **${list16?.rps.toFixed(0)}** ${check(list16 && list16.rps >= 2000)}; p99 ≤ 50 ms: **${ms(list16?.p99 ?? Number.NaN)}** ${check(list16 && list16.p99 <= 50)}; API/SQL ≥ 0.4: **${ratio?.toFixed(2)}** ${check(ratio === undefined ? undefined : ratio >= 0.4)} (vs SQL + decrypt: ${ratioDecrypt?.toFixed(2)}).`,
  ]);
}

const loadAtStart = loadAverage();
await main();
