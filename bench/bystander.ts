/**
 * A bystander's latency under hostile loads: an organization of its own reads (list 20 secrets) and
 * writes (update one) one request at a time while another organization's members run a load, and
 * the bystander's p50/p95/max are printed per load:
 *
 *   baseline  nothing else
 *   patterns  a viewer's project-events subscription with a backtracking glob (`/**\/@(*|*)` × --pattern-reps,
 *             ending in `!`) on creates and updates, and a write 29 folders deep in that project every 200 ms (bounded: few repetitions, and the
 *             scenario ends at its time whatever answers)
 *   imports   50 secret:import-mutation subscriptions of one viewer on a folder that imports another, and a
 *             write to the imported folder every 200 ms
 *   waits     300 revision waits (GET /api/v1/changes/wait) from 15 identities on a pending Integration, and an
 *             operator progress notification every 100 ms
 *   streams   300 change streams from 15 identities, and a write every 200 ms
 *
 * Each load runs on a fresh server (bench/bystander-server.ts, started from --checkout, default this one),
 * so an older commit is measured by the same bench. On PostgreSQL it also prints the database's
 * transactions per second during the measurement.
 *
 *   npm run bench:bystander -- --backend pglite|postgres [--checkout DIR] [--seconds 15] [--warmup 8] [--only waits,streams]
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import { appendResults, databaseStats, freshDatabase, loadAverage, log, machine, ms, percentile, postgresVersion, REPO, table } from './common.ts';

const { values: args } = parseArgs({
  options: {
    backend: { type: 'string', default: 'pglite' },
    checkout: { type: 'string', default: REPO },
    seconds: { type: 'string', default: '15' },
    warmup: { type: 'string', default: '8' },
    only: { type: 'string', default: 'baseline,patterns,imports,waits,streams' },
    'pattern-reps': { type: 'string', default: '6' },
    label: { type: 'string', default: '' },
  },
});
const backend = args.backend === 'postgres' ? 'postgres' : 'pglite';
const SECONDS = Number(args.seconds);
const REQUEST_TIMEOUT_MS = 30_000;

interface Setup {
  url: string;
  hostile: { adminToken: string; orgId: string; projectId: string; viewers: string[] };
  bystander: { token: string; projectId: string };
}

interface Load {
  /** Requests of the load refused (429) or failed, by status. */
  refused: Record<string, number>;
  stop(): Promise<void>;
}

async function startServer(databaseUrl?: string): Promise<{ setup: Setup; child: ChildProcess; stop(): Promise<void> }> {
  const script = join(REPO, 'bench', 'bystander-server.ts');
  const child = spawn(process.execPath, [script, '--checkout', args.checkout, '--backend', backend, ...(databaseUrl ? ['--database-url', databaseUrl] : [])], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const line = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout }).once('line', resolve);
    child.once('exit', (code) => reject(new Error(`server exited with ${code}`)));
  });
  return {
    setup: JSON.parse(line),
    child,
    async stop() {
      if (child.exitCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

async function request(setup: Setup, method: string, path: string, token: string, body?: unknown, signal?: AbortSignal) {
  const response = await fetch(`${setup.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: signal ?? AbortSignal.timeout(REQUEST_TIMEOUT_MS),
  });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : undefined, headers: response.headers };
}

/** A held request (a stream or a wait) whose answer is not awaited; counts refusals. */
function hold(setup: Setup, method: string, path: string, token: string, body: unknown, refused: Record<string, number>, controller: AbortController): void {
  void fetch(`${setup.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: controller.signal,
  })
    .then(async (response) => {
      if (response.status !== 200) refused[response.status] = (refused[response.status] ?? 0) + 1;
      // read (and drop) what a stream sends, as a client would
      for await (const _chunk of response.body ?? []) if (controller.signal.aborted) break;
    })
    .catch(() => undefined);
}

/** Runs `tick` every `everyMs` until stopped. */
function every(everyMs: number, tick: (index: number) => Promise<unknown>): () => Promise<void> {
  let stopped = false;
  const done = (async () => {
    for (let index = 0; !stopped; index++) {
      await tick(index).catch(() => undefined);
      await new Promise((resolve) => setTimeout(resolve, everyMs));
    }
  })();
  return async () => {
    stopped = true;
    await done;
  };
}

const hostileWrite = (setup: Setup, secretPath: string) => (index: number) =>
  request(setup, 'POST', '/api/v3/secrets/raw/HOSTILE_' + index, setup.hostile.adminToken, {
    workspaceId: setup.hostile.projectId,
    environment: 'dev',
    secretPath,
    secretValue: 'x',
  });

const folder = (setup: Setup, name: string, path = '/') =>
  request(setup, 'POST', '/api/v1/folders', setup.hostile.adminToken, { workspaceId: setup.hostile.projectId, environment: 'dev', path, name });

/** Folders /f1/f2/…/f<depth>, one inside the other; answers the deepest path. */
async function deepFolder(setup: Setup, depth: number): Promise<string> {
  let path = '';
  for (let level = 1; level <= depth; level++) {
    await folder(setup, `f${level}`, path || '/');
    path = `${path}/f${level}`;
  }
  return path;
}

const loads: Record<string, (setup: Setup) => Promise<Load>> = {
  async baseline() {
    return { refused: {}, stop: async () => undefined };
  },

  async patterns(setup) {
    const refused: Record<string, number> = {};
    const controller = new AbortController();
    const glob = `${'/**/@(*|*)'.repeat(Number(args['pattern-reps']))}!`;
    // every write is matched against the glob: the events it subscribes to are the ones the writes make, at a path
    // deep enough for a backtracking matcher to explode (the issue's freeze)
    const register = ['secret:create', 'secret:update'].map((event) => ({ event, conditions: { environmentSlug: 'dev', secretPath: glob } }));
    hold(setup, 'POST', '/api/v1/events/subscribe/project-events', setup.hostile.viewers[0]!, { projectId: setup.hostile.projectId, register }, refused, controller);
    const deep = await deepFolder(setup, 29);
    const stop = every(200, (index) =>
      request(setup, 'POST', `/api/v3/secrets/raw/P_${index}`, setup.hostile.adminToken, {
        workspaceId: setup.hostile.projectId,
        environment: 'dev',
        secretPath: deep,
        secretValue: 'x',
      }),
    );
    return { refused, stop: async () => (controller.abort(), stop()) };
  },

  async imports(setup) {
    const refused: Record<string, number> = {};
    const controller = new AbortController();
    await folder(setup, 'app');
    await folder(setup, 'shared');
    for (let index = 0; index < 30; index++) await hostileWrite(setup, '/app')(1000 + index);
    await request(setup, 'POST', '/api/v1/secret-imports', setup.hostile.adminToken, {
      workspaceId: setup.hostile.projectId,
      environment: 'dev',
      path: '/app',
      import: { environment: 'dev', path: '/shared' },
    });
    const register = [{ event: 'secret:import-mutation', conditions: { environmentSlug: 'dev', secretPath: '/**' } }];
    for (let index = 0; index < 50; index++) {
      hold(setup, 'POST', '/api/v1/events/subscribe/project-events', setup.hostile.viewers[0]!, { projectId: setup.hostile.projectId, register }, refused, controller);
    }
    const stop = every(200, hostileWrite(setup, '/shared'));
    return { refused, stop: async () => (controller.abort(), stop()) };
  },

  async waits(setup) {
    const refused: Record<string, number> = {};
    const controller = new AbortController();
    await folder(setup, 'noise');
    const record = await request(setup, 'PUT', '/api/v1/operator/integrations', setup.hostile.adminToken, {
      cluster: 'bench',
      managedBy: 'ns/pending',
      projectId: setup.hostile.projectId,
      environment: 'dev',
      secretPath: '/',
      app: 'pending',
      owner: 'ns',
      targetEnvironment: 'ns',
    });
    const noisy = await request(setup, 'PUT', '/api/v1/operator/integrations', setup.hostile.adminToken, {
      cluster: 'bench',
      managedBy: 'ns/noisy',
      projectId: setup.hostile.projectId,
      environment: 'dev',
      secretPath: '/noise',
      app: 'noisy',
      owner: 'ns',
      targetEnvironment: 'ns',
    });
    if (record.status !== 200 || noisy.status !== 200) throw new Error(`integration records: ${record.status} ${noisy.status}`);
    const written = await hostileWrite(setup, '/')(0);
    const revision = written.headers.get('coffer-revision');
    for (const token of setup.hostile.viewers) {
      for (let index = 0; index < 20; index++) hold(setup, 'GET', `/api/v1/changes/wait?revision=${revision}&timeout=5m`, token, undefined, refused, controller);
    }
    const stop = every(100, (index) =>
      request(setup, 'POST', `/api/v1/operator/integrations/${noisy.body.integration.id}/sync-result`, setup.hostile.adminToken, {
        isSynced: false,
        syncMessage: `noise ${index}`,
      }),
    );
    return { refused, stop: async () => (controller.abort(), stop()) };
  },

  async streams(setup) {
    const refused: Record<string, number> = {};
    const controller = new AbortController();
    for (const token of setup.hostile.viewers) {
      for (let index = 0; index < 20; index++) hold(setup, 'GET', '/api/v1/changes/stream', token, undefined, refused, controller);
    }
    const stop = every(200, hostileWrite(setup, '/'));
    return { refused, stop: async () => (controller.abort(), stop()) };
  },
};

/** The bystander's own requests, one at a time, for `seconds`: list its 20 secrets, update one, in turn. */
async function bystander(setup: Setup, seconds: number): Promise<{ reads: number[]; writes: number[]; failed: number }> {
  const reads: number[] = [];
  const writes: number[] = [];
  let failed = 0;
  const end = performance.now() + seconds * 1000;
  for (let index = 0; performance.now() < end; index++) {
    const started = performance.now();
    const write = index % 2 === 1;
    try {
      const response = write
        ? await request(setup, 'PATCH', '/api/v3/secrets/raw/KEY_0', setup.bystander.token, {
            workspaceId: setup.bystander.projectId,
            environment: 'dev',
            secretValue: `v${index}`,
          })
        : await request(setup, 'GET', `/api/v3/secrets/raw?workspaceId=${setup.bystander.projectId}&environment=dev`, setup.bystander.token);
      if (response.status !== 200) failed++;
      else (write ? writes : reads).push(performance.now() - started);
    } catch {
      failed++;
    }
  }
  return { reads: reads.sort((a, b) => a - b), writes: writes.sort((a, b) => a - b), failed };
}

/** The measured checkout's commit (the machine line names the bench's own). */
function checkoutCommit(): string {
  try {
    return execFileSync('git', ['rev-parse', '--short=12', 'HEAD'], { cwd: args.checkout, encoding: 'utf8' }).trim();
  } catch {
    return 'unknown';
  }
}

async function main() {
  const rows: (string | number)[][] = [];
  for (const name of args.only.split(',')) {
    const load = loads[name];
    if (!load) throw new Error(`unknown load ${name}`);
    const database = backend === 'postgres' ? await freshDatabase('bystander') : undefined;
    const server = await startServer(database?.url);
    try {
      log(`${name}: starting the load`);
      const running = await load(server.setup);
      // the load's own start (hundreds of requests authenticated and opened at once) passes first
      await new Promise((resolve) => setTimeout(resolve, Number(args.warmup) * 1000));
      const before = database && (await databaseStats(database.url));
      const started = performance.now();
      log(`${name}: measuring for ${SECONDS} s`);
      const measured = await bystander(server.setup, SECONDS);
      const elapsed = (performance.now() - started) / 1000;
      const after = database && (await databaseStats(database.url));
      await Promise.race([running.stop(), new Promise((resolve) => setTimeout(resolve, 10_000))]);
      const all = [...measured.reads, ...measured.writes].sort((a, b) => a - b);
      const refused = Object.entries(running.refused).map(([status, count]) => `${count} × ${status}`);
      rows.push([
        name,
        all.length,
        measured.failed,
        ms(percentile(all, 50)),
        ms(percentile(all, 95)),
        ms(all.at(-1) ?? NaN),
        ms(percentile(measured.reads, 95)),
        ms(percentile(measured.writes, 95)),
        before && after ? ((after.xact - before.xact) / elapsed).toFixed(0) : '—',
        refused.join(', ') || '—',
      ]);
      log(`${name}: p50 ${rows.at(-1)![3]} ms, p95 ${rows.at(-1)![4]} ms`);
    } finally {
      await server.stop();
      await database?.drop();
    }
  }
  const storage = backend === 'postgres' ? `${await postgresVersion()} (local, fresh database per load)` : 'embedded PGlite (in memory, fresh per load)';
  appendResults(`Bystander latency under hostile loads (${backend})${args.label ? ` — ${args.label}` : ''}`, [
    `Machine: ${machine(storage)}; load ${loadAverage()}. Server from \`${args.checkout}\` (commit ${checkoutCommit()}). ${SECONDS} s of the bystander's requests per load (one at a time, list 20 / update 1 in turn), after ${args.warmup} s of load.`,
    '',
    ...table(['load', 'requests', 'failed', 'p50 ms', 'p95 ms', 'max ms', 'list p95 ms', 'update p95 ms', 'DB transactions/s', "load's own requests refused"], rows),
  ]);
}

await main();
process.exit(0);
