/**
 * How fast oversized work is refused: each request the README's Limits table
 * refuses, sent 10 times to an in-process API (Fastify inject, no sockets),
 * each time with another client's small request (list projects) alongside.
 * Prints the time to the refusal and the probe's latency, and appends them to
 * bench/RESULTS.md.
 *
 *   npm run bench:limits                      PostgreSQL (a fresh database on BENCH_DATABASE_URL's server)
 *   npm run bench:limits -- --backend pglite  embedded PGlite (in memory)
 */
import { randomBytes } from 'node:crypto';
import { parseArgs } from 'node:util';
import { sql } from 'kysely';
import pino from 'pino';
import { openDatabase } from '../src/db/database.ts';
import { migrate } from '../src/db/migrate.ts';
import { buildApiApp } from '../src/http/app.ts';
import { createServices } from '../src/app/container.ts';
import { appendResults, freshDatabase, loadAverage, log, machine, ms, percentile, postgresVersion, table } from './common.ts';

const { values: args } = parseArgs({ options: { backend: { type: 'string', default: 'postgres' }, runs: { type: 'string', default: '10' } } });
const backend = args.backend === 'pglite' ? 'pglite' : 'postgres';
const RUNS = Number(args.runs);

async function main() {
  const fresh = backend === 'postgres' ? await freshDatabase('limits') : undefined;
  const database = await openDatabase(fresh ? { databaseUrl: fresh.url, dataDir: '' } : { dataDir: 'memory://' });
  await migrate(database);
  const services = createServices(
    database,
    { encryptionKey: randomBytes(32).toString('base64'), authSecret: randomBytes(48).toString('base64') },
    { auditRetentionDays: 90 },
  );
  const { app } = await buildApiApp(services, { logger: pino({ level: 'silent' }), trustedProxies: [] });
  await app.ready();
  const call = async (method: string, url: string, token?: string, body?: unknown, query?: Record<string, string>) => {
    const response = await app.inject({
      method: method as 'GET',
      url,
      query,
      headers: token ? { authorization: `Bearer ${token}` } : {},
      ...(body === undefined ? {} : { payload: body as object }),
    });
    return { status: response.statusCode, body: response.body ? JSON.parse(response.body) : undefined };
  };
  try {
    const boot = await call('POST', '/api/v1/admin/bootstrap', undefined, { email: 'admin@example.com', password: 'correct horse battery', organization: 'Bench' });
    const token: string = boot.body.identity.credentials.token;
    const workspaceId: string = (await call('POST', '/api/v2/workspace', token, { projectName: 'Limits' })).body.project.id;
    const base = { workspaceId, environment: 'dev' };
    const folder = (path: string, name: string) => call('POST', '/api/v1/folders', token, { ...base, path, name });
    const secret = (name: string, secretPath: string, secretValue: string) => call('POST', `/api/v3/secrets/raw/${name}`, token, { ...base, secretPath, secretValue });
    const importInto = (path: string, source: string) => call('POST', '/api/v1/secret-imports', token, { ...base, path, import: { environment: 'dev', path: source } });
    const list = (query: Record<string, string>) => call('GET', '/api/v3/secrets/raw', token, undefined, { ...base, ...query });

    log('setting up: reference bomb, import lattice, 5,001 folders, 34 MB of secrets');
    await folder('/', 'bomb');
    for (let index = 0; index < 10; index++) await secret(`S${index}`, '/bomb', index === 9 ? 'x'.repeat(10) : `\${S${index + 1}}`.repeat(5));
    for (let layer = 1; layer <= 4; layer++) for (let index = 0; index < 6; index++) await folder('/lattice', `l${layer}_${index}`);
    await folder('/lattice', 'top');
    for (let index = 0; index < 6; index++) await importInto('/lattice/top', `/lattice/l1_${index}`);
    for (let layer = 1; layer < 4; layer++)
      for (let from = 0; from < 6; from++) for (let to = 0; to < 6; to++) await importInto(`/lattice/l${layer}_${from}`, `/lattice/l${layer + 1}_${to}`);
    await folder('/', 'wide');
    const wide = await database.db.selectFrom('secretFolders').select(['id', 'envId']).where('name', '=', 'wide').executeTakeFirstOrThrow();
    await sql`INSERT INTO secret_folders (env_id, parent_id, name) SELECT ${wide.envId}, ${wide.id}, 'f' || n FROM generate_series(1, 5001) AS n`.execute(database.db);
    await folder('/', 'big');
    for (let index = 0; index < 34; index++) await secret(`BIG_${index}`, '/big', 'v'.repeat(1_000_000));

    const deepPath = Array.from({ length: 20_000 }, () => 'a').join('/');
    const scenarios: [string, () => Promise<{ status: number; body: any }>][] = [
      ['folder path of 20,000 segments (40 KB body)', () => folder(deepPath, 'x')],
      ['path of 9,000 characters (list)', () => list({ secretPath: `/${'b'.repeat(9000)}` })],
      ['10 secrets × 5 references each, expanded (19.5 M characters)', () => list({ secretPath: '/bomb', expandSecretReferences: 'true' })],
      ['imports sharing sources, 1,554 chains', () => list({ secretPath: '/lattice/top', include_imports: 'true' })],
      ['recursive read of 5,001 folders', () => list({ secretPath: '/wide', recursive: 'true' })],
      ['listing of 34 MB of secrets', () => list({ secretPath: '/big' })],
    ];
    const rows: (string | number)[][] = [];
    for (const [name, request] of scenarios) {
      const refusals: number[] = [];
      const probes: number[] = [];
      let answer = '';
      for (let run = 0; run < RUNS; run++) {
        const started = performance.now();
        const [response, probeMs] = await Promise.all([
          request().then((result) => ({ ...result, ms: performance.now() - started })),
          call('GET', '/api/v1/workspace', token).then((result) => {
            if (result.status !== 200) throw new Error(`probe answered ${result.status}`);
            return performance.now() - started;
          }),
        ]);
        refusals.push(response.ms);
        probes.push(probeMs);
        answer = `${response.status} ${response.body?.error ?? ''}`;
      }
      refusals.sort((a, b) => a - b);
      probes.sort((a, b) => a - b);
      log(`${name}: ${answer}, p50 ${ms(percentile(refusals, 50))} ms`);
      rows.push([name, answer, ms(percentile(refusals, 50)), ms(refusals.at(-1)!), ms(percentile(probes, 50)), ms(probes.at(-1)!)]);
    }
    const storage = backend === 'postgres' ? `${await postgresVersion()} (local, fresh database)` : 'embedded PGlite (in memory)';
    appendResults(`Limits: time to refuse oversized work (${backend})`, [
      `Machine: ${machine(storage)}. Load average: ${loadAverage()}. ${RUNS} runs each, in-process (inject), a small request (list projects) sent alongside each.`,
      '',
      ...table(['request', 'answer', 'refused in, p50 ms', 'max ms', 'concurrent probe answered in, p50 ms', 'max ms'], rows),
    ]);
  } finally {
    await app.close();
    await database.close();
    await fresh?.drop();
  }
}

await main();
