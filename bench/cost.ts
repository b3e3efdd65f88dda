/**
 * What one request costs the server, measured in CPU time rather than wall time: a robust figure on a shared
 * machine, where req/s moves with everything else that runs.
 *
 *   node bench/cost.ts [--backend postgres|pglite] [--duration 6] [--clients 16] [--only list,get,create,update] [--checkout <dir>]
 *
 * Starts this checkout's built `coffer serve` (or the one built in `--checkout`, an earlier commit's worktree) on a fresh database (operator off), seeds the bench caller and 100
 * secrets as bench:compare does, and for each scenario reads the server's CPU time (user + system, /proc) and its
 * statement and round-trip counters (coffer_db_queries_total, coffer_db_round_trips_total) before and after an
 * autocannon run; prints CPU µs, statements and round trips per request, and on PostgreSQL the CPU µs of the
 * database's backends (the local server's processes serving the bench database, from /proc).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { backendCpuSeconds, backendCpuSpent, bootstrapWithMember, call, cpuSeconds, freshDatabase, loadAverage, log, serverKeys, startServer } from './common.ts';

const { values: args } = parseArgs({
  options: {
    backend: { type: 'string', default: 'postgres' },
    duration: { type: 'string', default: '6' },
    clients: { type: 'string', default: '16' },
    only: { type: 'string', default: 'list,get,create,update' },
    checkout: { type: 'string' },
  },
});

/** The server's statements and round trips to its database so far (a server without the round-trip counter: NaN). */
async function statements(probes: string): Promise<{ statements: number; roundTrips: number }> {
  const text = await (await fetch(`${probes}/metrics`)).text();
  const counter = (name: string) => Number(new RegExp(`^${name} (\\d+)`, 'm').exec(text)?.[1] ?? Number.NaN);
  return { statements: counter('coffer_db_queries_total'), roundTrips: counter('coffer_db_round_trips_total') };
}

const key = (index: number) => `KEY_${String(index).padStart(3, '0')}`;

async function main() {
  const backend = args.backend === 'pglite' ? 'pglite' : 'postgres';
  const database = backend === 'postgres' ? await freshDatabase('cost') : undefined;
  const dataDir = backend === 'pglite' ? mkdtempSync(join(os.tmpdir(), 'coffer-cost-')) : undefined;
  const server = await startServer(
    {
      ...serverKeys(),
      COFFER_OPERATOR: 'false',
      COFFER_LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'info',
      ...(database ? { DATABASE_URL: database.url } : { COFFER_DATA_DIR: dataDir! }),
    },
    { nodeArgs: process.env.BENCH_NODE_ARGS?.split(' ').filter(Boolean), checkout: args.checkout },
  );
  try {
    const { projectId, memberToken } = await bootstrapWithMember(server, 'Bench cost');
    const secrets = Array.from({ length: 100 }, (_, index) => ({ secretKey: key(index), secretValue: `value-${index}-${'x'.repeat(40)}` }));
    await call(server, 'POST', '/api/v3/secrets/batch/raw', memberToken, { workspaceId: projectId, environment: 'dev', secretPath: '/', secrets });
    const query = `workspaceId=${projectId}&environment=dev&secretPath=/`;
    let written = 0;
    const scenarios: Record<string, autocannon.Request[]> = {
      list: [{ method: 'GET', path: `/api/v3/secrets/raw?${query}` }],
      get: [{ method: 'GET', path: `/api/v3/secrets/raw/${key(42)}?${query}` }],
      create: [
        {
          method: 'POST',
          setupRequest: (request) => ({
            ...request,
            path: `/api/v3/secrets/raw/NEW_${written++}`,
            body: JSON.stringify({ workspaceId: projectId, environment: 'staging', secretPath: '/', secretValue: `created-${written}` }),
          }),
        },
      ],
      update: [
        {
          method: 'PATCH',
          setupRequest: (request) => {
            const index = written++;
            return {
              ...request,
              path: `/api/v3/secrets/raw/${key(index % 100)}`,
              body: JSON.stringify({ workspaceId: projectId, environment: 'dev', secretPath: '/', secretValue: `updated-${index}` }),
            };
          },
        },
      ],
    };
    const run = (requests: autocannon.Request[], duration: number) =>
      autocannon({
        url: server.api,
        connections: Number(args.clients),
        duration,
        headers: { authorization: `Bearer ${memberToken}`, 'content-type': 'application/json' },
        requests,
      });
    await run(scenarios.list!, 3);
    const pid = server.process.pid!;
    for (const name of args.only.split(',')) {
      const backends0 = database ? await backendCpuSeconds(database.name) : undefined;
      const [cpu0, statements0, load0] = [cpuSeconds(pid), await statements(server.probes), loadAverage().split(' / ')[0]];
      const result = await run(scenarios[name]!, Number(args.duration));
      const [cpu1, statements1] = [cpuSeconds(pid), await statements(server.probes)];
      const backends1 = database ? await backendCpuSeconds(database.name) : undefined;
      const requests = result.requests.total;
      const databaseCpu = backends0 && backends1 ? `, PostgreSQL backends ${((1e6 * backendCpuSpent(backends0, backends1)) / requests).toFixed(0)} µs/request` : '';
      log(
        `${backend} ${name}: ${(result.requests.total / result.duration).toFixed(0)} req/s, server CPU ${((1e6 * (cpu1 - cpu0)) / requests).toFixed(0)} µs/request${databaseCpu}, ` +
          `${((statements1.statements - statements0.statements) / requests).toFixed(2)} statements/request ` +
          `(${((statements1.roundTrips - statements0.roundTrips) / requests).toFixed(2)} round trips), errors ${result.errors + result.non2xx}, load ${load0}→${loadAverage().split(' / ')[0]}`,
      );
    }
  } finally {
    await server.stop();
    await database?.drop();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  }
}

await main();
