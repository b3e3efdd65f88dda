/**
 * The regression guard: an earlier commit and this checkout side by side, on the same data and through the same
 * client, in interleaved rounds, with the ratio this/earlier per scenario.
 *
 *   npm run bench:compare -- --base ffd62fb [--rounds 2] [--duration 8] [--clients 16]
 *                            [--backends postgres,pglite] [--only list,get,create,update,mixed] [--no-record]
 *
 * The base commit is checked out into a temporary git worktree (detached, removed at the end) and built there
 * with this checkout's TypeScript; its node_modules is a symlink to this checkout's (said so, with the
 * differences, when the base's package.json names other dependencies). This checkout is built by the npm script.
 * Each backend gets two servers (`coffer serve`, operator off), each on a fresh database of its own (PostgreSQL
 * at BENCH_DATABASE_URL, or a PGlite data directory), the same keys and the same seed: a machine identity with
 * the project role member (bench/common.ts), 100 secrets in dev. autocannon, in this process, drives one server
 * at a time; each round runs every scenario on both, the order alternating per round (base first in odd rounds).
 *
 * Scenarios: list 100 (GET /api/v3/secrets/raw), get one, create (a new key in staging), update (one of the
 * 100, in turn), mixed (per connection, 9 list 100 then 1 update). The table goes to bench/RESULTS.md with
 * the machine, the load average around every cell and both commits. Beside req/s, each cell has the server
 * process's CPU time per request answered (/proc, user + system): on a shared machine req/s follows whatever else
 * runs, CPU per request much less. On PostgreSQL also the CPU time of the backends serving that server's database
 * (the local server's processes, /proc), and the two together head/base.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { checkOutCommit } from './commit-checkout.ts';
import {
  appendResults,
  backendCpuSeconds,
  backendCpuSpent,
  bootstrapWithMember,
  call,
  cpuSeconds,
  freshDatabase,
  gitCommit,
  loadAverage,
  log,
  machine,
  ms,
  postgresVersion,
  REPO,
  type Server,
  serverKeys,
  startServer,
  table,
} from './common.ts';

const { values: args } = parseArgs({
  options: {
    base: { type: 'string', default: 'ffd62fb' },
    rounds: { type: 'string', default: '2' },
    duration: { type: 'string', default: '8' },
    clients: { type: 'string', default: '16' },
    backends: { type: 'string', default: 'postgres,pglite' },
    only: { type: 'string', default: 'list,get,create,update,mixed' },
    'no-record': { type: 'boolean', default: false },
  },
});
const ROUNDS = Number(args.rounds);
const SECONDS = Number(args.duration);
const CLIENTS = Number(args.clients);
const SECRETS = 100;
const SCENARIOS = ['list', 'get', 'create', 'update', 'mixed'] as const;
type Scenario = (typeof SCENARIOS)[number];
const SCENARIO_NAMES: Record<Scenario, string> = { list: 'list 100', get: 'get one', create: 'create', update: 'update', mixed: 'mixed 90/10' };
type Side = 'base' | 'head';

interface Target {
  side: Side;
  server: Server;
  projectId: string;
  token: string;
  /** PostgreSQL: the server's own database, whose backends' CPU time is read too. */
  database?: string;
}

interface Cell {
  scenario: Scenario;
  round: number;
  side: Side;
  rps: number;
  p99: number;
  errors: number;
  /** The server's CPU time (user + system) per request answered, in µs: steadier than req/s on a shared machine. */
  cpuUs: number;
  /** PostgreSQL: its backends' CPU time for the server's database per request answered, in µs (NaN on PGlite, whose engine is in the server). */
  databaseCpuUs: number;
  load: string;
}

/** One server of `checkout` on a fresh database, seeded like every other. */
async function startTarget(side: Side, checkout: string, backend: 'postgres' | 'pglite', keys: Record<string, string>) {
  const database = backend === 'postgres' ? await freshDatabase(`compare_${side}`) : undefined;
  const dataDir = backend === 'pglite' ? mkdtempSync(join(os.tmpdir(), `coffer-compare-${side}-`)) : undefined;
  const cleanup = async () => {
    await database?.drop();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  };
  try {
    const server = await startServer(
      {
        ...keys,
        COFFER_OPERATOR: 'false',
        COFFER_LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'info',
        ...(database ? { DATABASE_URL: database.url } : { COFFER_DATA_DIR: dataDir! }),
      },
      { checkout },
    );
    const { projectId, memberToken } = await bootstrapWithMember(server, 'Bench compare');
    const secrets = Array.from({ length: SECRETS }, (_, index) => ({
      secretKey: secretKey(index),
      secretValue: `value-${index}-${'x'.repeat(40)}`,
      secretComment: index % 2 === 0 ? `comment ${index}` : undefined,
    }));
    await call(server, 'POST', '/api/v3/secrets/batch/raw', memberToken, { workspaceId: projectId, environment: 'dev', secretPath: '/', secrets });
    const target: Target = { side, server, projectId, token: memberToken, database: database?.name };
    return {
      target,
      async stop() {
        await server.stop();
        await cleanup();
      },
    };
  } catch (error) {
    await cleanup();
    throw error;
  }
}

const secretKey = (index: number) => `KEY_${String(index).padStart(3, '0')}`;

/** The requests of one scenario against one server; writes number their keys so that no two collide. */
function requestsOf(scenario: Scenario, target: Target, round: number): autocannon.Request[] {
  const query = `workspaceId=${target.projectId}&environment=dev&secretPath=/`;
  const list: autocannon.Request = { method: 'GET', path: `/api/v3/secrets/raw?${query}` };
  let written = 0;
  const update: autocannon.Request = {
    method: 'PATCH',
    setupRequest: (request) => {
      const index = written++;
      return {
        ...request,
        path: `/api/v3/secrets/raw/${secretKey(index % SECRETS)}`,
        body: JSON.stringify({ workspaceId: target.projectId, environment: 'dev', secretPath: '/', secretValue: `updated-${round}-${index}` }),
      };
    },
  };
  switch (scenario) {
    case 'list':
      return [list];
    case 'get':
      return [{ method: 'GET', path: `/api/v3/secrets/raw/${secretKey(42)}?${query}` }];
    case 'create':
      return [
        {
          method: 'POST',
          setupRequest: (request) => ({
            ...request,
            path: `/api/v3/secrets/raw/NEW_${round}_${written++}`,
            body: JSON.stringify({ workspaceId: target.projectId, environment: 'staging', secretPath: '/', secretValue: `created-${written}` }),
          }),
        },
      ];
    case 'update':
      return [update];
    case 'mixed':
      return [...Array.from({ length: 9 }, () => list), update];
  }
}

async function drive(target: Target, scenario: Scenario, round: number): Promise<Omit<Cell, 'scenario' | 'round' | 'side' | 'load'>> {
  const pid = target.server.process.pid!;
  const backendsBefore = target.database ? await backendCpuSeconds(target.database) : undefined;
  const cpuBefore = cpuSeconds(pid);
  const result = await autocannon({
    url: target.server.api,
    connections: CLIENTS,
    duration: SECONDS,
    timeout: 30,
    headers: { authorization: `Bearer ${target.token}`, 'content-type': 'application/json' },
    requests: requestsOf(scenario, target, round),
  });
  const cpuUs = (1e6 * (cpuSeconds(pid) - cpuBefore)) / Math.max(1, result.requests.total);
  const backendsAfter = target.database ? await backendCpuSeconds(target.database) : undefined;
  const databaseCpuUs = backendsBefore && backendsAfter ? (1e6 * backendCpuSpent(backendsBefore, backendsAfter)) / Math.max(1, result.requests.total) : Number.NaN;
  return {
    rps: result.requests.total / (result.duration || SECONDS),
    p99: result.latency.p99,
    errors: result.errors + result.timeouts + result.non2xx,
    cpuUs,
    databaseCpuUs,
  };
}

async function compareOn(backend: 'postgres' | 'pglite', baseDir: string, scenarios: Scenario[]): Promise<Cell[]> {
  const keys = serverKeys();
  const base = await startTarget('base', baseDir, backend, keys);
  const head = await startTarget('head', REPO, backend, keys).catch(async (error) => {
    await base.stop();
    throw error;
  });
  const cells: Cell[] = [];
  try {
    for (const { target } of [base, head]) {
      log(`${backend} ${target.side}: warm-up (3 s of list 100)`);
      await autocannon({
        url: target.server.api,
        connections: CLIENTS,
        duration: 3,
        headers: { authorization: `Bearer ${target.token}` },
        requests: requestsOf('list', target, 0),
      });
    }
    for (let round = 1; round <= ROUNDS; round++) {
      for (const scenario of scenarios) {
        const order = round % 2 === 1 ? [base, head] : [head, base];
        for (const { target } of order) {
          const before = loadAverage().split(' / ')[0]!;
          const result = await drive(target, scenario, round);
          const load = `${before}→${loadAverage().split(' / ')[0]}`;
          cells.push({ scenario, round, side: target.side, load, ...result });
          log(
            `${backend} round ${round} ${SCENARIO_NAMES[scenario]} ${target.side}: ${result.rps.toFixed(0)} req/s, p99 ${ms(result.p99)} ms, server CPU ${result.cpuUs.toFixed(0)} µs/request` +
              `${Number.isNaN(result.databaseCpuUs) ? '' : `, PostgreSQL ${result.databaseCpuUs.toFixed(0)} µs/request`}, errors ${result.errors}, load ${load}`,
          );
        }
      }
    }
  } finally {
    await head.stop();
    await base.stop();
  }
  return cells;
}

function rowsOf(cells: Cell[]): string[][] {
  const rows: string[][] = [];
  const keys = [...new Set(cells.map((cell) => `${cell.round}|${cell.scenario}`))];
  for (const key of keys) {
    const [round, scenario] = key.split('|') as [string, Scenario];
    const of = (side: Side) => cells.find((cell) => String(cell.round) === round && cell.scenario === scenario && cell.side === side)!;
    const [base, head] = [of('base'), of('head')];
    rows.push(
      [
        SCENARIO_NAMES[scenario],
        round,
        base.rps.toFixed(0),
        ms(base.p99),
        head.rps.toFixed(0),
        ms(head.p99),
        `**${(head.rps / base.rps).toFixed(2)}**`,
        (head.p99 / base.p99).toFixed(2),
        `${base.cpuUs.toFixed(0)} / ${head.cpuUs.toFixed(0)}`,
        `**${(head.cpuUs / base.cpuUs).toFixed(2)}**`,
        Number.isNaN(base.databaseCpuUs) ? '—' : `${base.databaseCpuUs.toFixed(0)} / ${head.databaseCpuUs.toFixed(0)}`,
        Number.isNaN(base.databaseCpuUs) ? '—' : `**${((head.cpuUs + head.databaseCpuUs) / (base.cpuUs + base.databaseCpuUs)).toFixed(2)}**`,
        `${base.errors}/${head.errors}`,
        `${base.load}, ${head.load}`,
      ].map(String),
    );
  }
  return rows;
}

async function main() {
  const scenarios = SCENARIOS.filter((scenario) => args.only.split(',').includes(scenario));
  const backends = args.backends.split(',').filter((backend): backend is 'postgres' | 'pglite' => backend === 'postgres' || backend === 'pglite');
  const headCommit = gitCommit();
  const loadAtStart = loadAverage();
  const checkout = checkOutCommit(args.base);
  const results: { backend: 'postgres' | 'pglite'; cells: Cell[] }[] = [];
  try {
    for (const backend of backends) results.push({ backend, cells: await compareOn(backend, checkout.dir, scenarios) });
  } finally {
    checkout.remove();
  }
  const storage = backends.includes('postgres') ? `${await postgresVersion()} (local) and embedded PGlite` : 'embedded PGlite';
  const lines = [
    `Machine: ${machine(storage)}. Load average (1/5/15 min) at start → end: ${loadAtStart} → ${loadAverage()}.`,
    `base = ${checkout.sha} (temporary worktree, built there), head = ${headCommit} (this checkout). ${CLIENTS} clients, ${SECONDS} s per cell, ` +
      `autocannon in the bench process; ${ROUNDS} interleaved rounds (odd rounds base first); each server on a fresh database of its own, same keys and seed.` +
      (checkout.notes.length > 0 ? ` Note: ${checkout.notes.join('; ')}.` : ''),
  ];
  for (const { backend, cells } of results) {
    lines.push(
      '',
      `**${backend === 'postgres' ? 'PostgreSQL' : 'PGlite'}**`,
      '',
      ...table(
        [
          'scenario',
          'round',
          'base req/s',
          'base p99 ms',
          'head req/s',
          'head p99 ms',
          'req/s head/base',
          'p99 head/base',
          'server CPU µs/req base / head',
          'CPU/req head/base',
          'PostgreSQL CPU µs/req base / head',
          'server + PostgreSQL CPU/req head/base',
          'errors base/head',
          'load (1 min) base, head',
        ],
        rowsOf(cells),
      ),
    );
  }
  if (args['no-record']) process.stdout.write(`${lines.join('\n')}\n`);
  else appendResults(`Side by side: ${checkout.sha} (base) and ${headCommit} (head)`, lines);
}

await main();
