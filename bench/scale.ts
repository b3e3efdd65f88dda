/**
 * Scale: 10,000 Integrations over 1,000 projects (SecretsProjects) in 100 namespaces on the test
 * control plane. The fleet is created first (projects through an API-only `coffer serve`, CRs through
 * the kube API, 16 at a time); then the measured operator process starts:
 *
 *   1. cold start: time from starting the operator to all Integrations Synced; apiserver requests
 *      (apiserver_request_total) and database statements (coffer_db_queries_total) per Integration;
 *   2. steady state: the operator's RSS once its queue has been empty for a while;
 *   3. full resync with nothing changed: the operator restarted, every resource reconciled again;
 *      Secret writes (must be 0), apiserver requests and database statements per Integration.
 *
 *   npm run bench:scale [-- --projects 1000 --namespaces 100 --per-project 10] [--commit <rev>]
 *
 * `--commit <rev>` measures that commit instead of this checkout (checked out and built in a temporary worktree,
 * as bench:compare does): its server, operator and CRDs, through this checkout's bench. Run it and this checkout
 * one after the other, alternating, for a side by side on one machine.
 */
import { existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import {
  apiserverProfile,
  apiserverRequests,
  controlPlaneCpuSeconds,
  countIntegrations,
  createFleet,
  difference,
  operatorMetrics,
  integrationName,
  namespaceName,
  startCluster,
  storedSizes,
  sumMetric,
  targetName,
  total,
} from './cluster.ts';
import {
  appendResults,
  backendCpuSeconds,
  benchNodeOptions,
  backendCpuSpent,
  call,
  cpuSeconds,
  freshDatabase,
  loadAverage,
  log,
  machine,
  postgresVersion,
  REPO,
  rssMiB,
  type Server,
  serverKeys,
  startServer,
  table,
} from './common.ts';
import { checkOutCommit } from './commit-checkout.ts';
import { sampleAllocations } from './allocation-profile.ts';
import { freePorts } from '../test/support/free-port.ts';

const { values: args } = parseArgs({
  options: {
    projects: { type: 'string', default: '1000' },
    namespaces: { type: 'string', default: '100' },
    'per-project': { type: 'string', default: '10' },
    secrets: { type: 'string', default: '5' },
    commit: { type: 'string' },
  },
});
const shape = {
  projects: Number(args.projects),
  namespaces: Number(args.namespaces),
  integrationsPerProject: Number(args['per-project']),
  secretsPerProject: Number(args.secrets),
};
const expected = shape.projects * shape.integrationsPerProject;
const profileDir = process.env.BENCH_CPU_PROF;
const extraNodeArgs = process.env.BENCH_NODE_ARGS?.split(' ').filter(Boolean) ?? [];

// another commit's server, operator and CRDs (its test fixtures' CRDs are this checkout's: the bench creates none of them)
const measured = args.commit ? checkOutCommit(args.commit) : undefined;
const checkout = measured?.dir ?? REPO;
const { value: nodeOptions, described: nodeOptionsSetup } = benchNodeOptions(checkout);
const nodeSetup = `${nodeOptionsSetup}${extraNodeArgs.length > 0 ? `, node ${extraNodeArgs.join(' ')}` : ''}`;

const crdDirs = [path.join(checkout, 'crds'), path.join(REPO, 'test', 'k8s', 'fixtures')].filter((dir) => existsSync(dir));

const loadAtStart = loadAverage();
const cluster = await startCluster({ crdDirs });
const database = await freshDatabase('scale');
const keys = serverKeys();
const environment = {
  ...keys,
  DATABASE_URL: database.url,
  KUBECONFIG: cluster.plane.kubeconfigPath,
  COFFER_OPERATOR_NAMESPACE: 'bench-system',
  COFFER_LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'warn',
};

interface Phase {
  name: string;
  seconds: number;
  apiserver: Map<string, number>;
  dbQueries: number;
  /** Messages sent to the database and answered (coffer_db_round_trips_total): fewer than the statements on PostgreSQL. */
  dbRoundTrips: number;
  reconciles: Map<string, number>;
  /** CPU seconds each process spent over the phase */
  cpu: Map<string, number>;
}

/** CPU seconds so far of each process the phase loads: the control plane, the operator and the database backends serving it. */
async function cpuReading(operator?: Server) {
  return {
    plane: controlPlaneCpuSeconds(cluster),
    operator: operator ? cpuSeconds(operator.process.pid!) : 0,
    backends: await backendCpuSeconds(database.name),
  };
}

async function cpuSpent(operator: Server, before: Awaited<ReturnType<typeof cpuReading>>): Promise<Map<string, number>> {
  const after = await cpuReading(operator);
  const plane = difference(after.plane, before.plane);
  return new Map([
    ['kube-apiserver', plane.get('kube-apiserver') ?? 0],
    ['etcd', plane.get('etcd') ?? 0],
    ['operator', after.operator - before.operator],
    ['PostgreSQL', backendCpuSpent(before.backends, after.backends)],
  ]);
}

// BENCH_APISERVER_PROF=<dir>: a pprof CPU profile of the kube-apiserver over the first minute of the cold start
const apiserverProfileDir = process.env.BENCH_APISERVER_PROF;
// BENCH_ALLOC_PROF=<dir>: what the operator allocates over the first 20 s of the cold start (allocation-profile.ts)
const allocationProfileDir = process.env.BENCH_ALLOC_PROF;
const inspectorPort = allocationProfileDir ? (await freePorts(1))[0]! : undefined;

function startOperator(): Promise<Server> {
  const profiling = [
    ...(profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : []),
    ...(inspectorPort === undefined ? [] : [`--inspect=127.0.0.1:${inspectorPort}`]),
  ];
  return startServer(
    { ...environment, COFFER_OPERATOR: 'true', COFFER_LEADER_ELECTION: 'false', COFFER_RESYNC_INTERVAL: '1h', NODE_OPTIONS: nodeOptions },
    { nodeArgs: [...profiling, ...extraNodeArgs], checkout },
  );
}

/** What the bench reads of the operator, every half second while it waits. */
const POLLED_METRICS = [
  'coffer_db_queries_total',
  'coffer_db_round_trips_total',
  'coffer_operator_reconciles_total',
  'coffer_operator_queue_length',
  'coffer_operator_events_dropped_total',
  'coffer_nodejs_heap_size_used_bytes',
  'coffer_nodejs_heap_size_total_bytes',
];

const operatorCounters = async (server: Server) => {
  const text = await operatorMetrics(server, POLLED_METRICS);
  return {
    dbQueries: total(sumMetric(text, 'coffer_db_queries_total', [])),
    dbRoundTrips: total(sumMetric(text, 'coffer_db_round_trips_total', [])),
    reconciles: sumMetric(text, 'coffer_operator_reconciles_total', ['kind', 'outcome']),
    queue: total(sumMetric(text, 'coffer_operator_queue_length', [])),
    eventsDropped: total(sumMetric(text, 'coffer_operator_events_dropped_total', [])),
    heapUsedMiB: total(sumMetric(text, 'coffer_nodejs_heap_size_used_bytes', [])) / 2 ** 20,
    heapTotalMiB: total(sumMetric(text, 'coffer_nodejs_heap_size_total_bytes', [])) / 2 ** 20,
  };
};

/** Until the operator's queue has stayed empty for `quietMs`. */
async function quiet(server: Server, quietMs: number, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let emptySince: number | undefined;
  while (Date.now() < deadline) {
    const { queue } = await operatorCounters(server);
    if (queue > 0) emptySince = undefined;
    else emptySince ??= Date.now();
    if (emptySince !== undefined && Date.now() - emptySince >= quietMs) return;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  throw new Error('the operator queue never became empty');
}

const phases: Phase[] = [];
const rss: number[] = [];
let heapNote = '';
try {
  const storage = `${await postgresVersion()} (local, fresh database)`;
  await cluster.core.createNamespace({ body: { metadata: { name: 'bench-system' } } });
  const api = await startServer({ ...environment, COFFER_OPERATOR: 'false' }, { checkout });
  try {
    const boot = await call(api, 'POST', '/api/v1/admin/bootstrap', undefined, {
      email: 'bench@example.com',
      password: 'a long benchmark password',
      organization: 'Bench',
    });
    await createFleet(cluster, api, boot.identity.credentials.token, shape);
  } finally {
    await api.stop();
  }

  // a phase may take 900 s, or 0.1 s per Integration for a larger fleet (50,000: 5,000 s)
  const limitMs = Math.max(900_000, expected * 100);
  // 1. cold start. Completion: the operator's queue is empty after it reconciled every Integration, and a
  // LIST then finds them all Synced (the time is taken when the queue was seen empty). No watch is kept
  // open meanwhile, so the apiserver serves only the operator.
  log(`starting the operator on ${expected} Integrations`);
  let before = await apiserverRequests(cluster);
  let cpuBefore = await cpuReading();
  let started = Date.now();
  let operator = await startOperator();
  let profiled: Promise<void> | undefined;
  if (apiserverProfileDir) {
    mkdirSync(apiserverProfileDir, { recursive: true });
    profiled = apiserverProfile(cluster, 60, path.join(apiserverProfileDir, `kube-apiserver-cold-start-${expected}.pprof`));
  }
  let allocationsSampled: Promise<void> | undefined;
  if (allocationProfileDir && inspectorPort !== undefined) {
    mkdirSync(allocationProfileDir, { recursive: true });
    allocationsSampled = sampleAllocations(inspectorPort, 20, path.join(allocationProfileDir, `operator-cold-start-${expected}.heapprofile`));
  }
  let counters = await operatorCounters(operator);
  let coldMs = 0;
  let lastLog = Date.now();
  for (;;) {
    counters = await operatorCounters(operator);
    const reconciled = total(counters.reconciles, (key) => key.startsWith('Integration '));
    if (reconciled >= expected && counters.queue === 0) {
      const at = Date.now() - started;
      const { synced } = await countIntegrations(cluster);
      if (synced >= expected) {
        coldMs = at;
        break;
      }
    }
    if (Date.now() - started > limitMs) throw new Error(`not all Integrations Synced after ${limitMs / 1000} s`);
    if (Date.now() - lastLog > 10_000) {
      lastLog = Date.now();
      log(
        `  ${reconciled} Integration reconciles, queue ${counters.queue}, after ${((Date.now() - started) / 1000).toFixed(0)} s; RSS ${rssMiB(operator.process.pid!).toFixed(0)} MiB`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  counters = await operatorCounters(operator);
  phases.push({
    name: 'cold start → all Synced',
    seconds: coldMs / 1000,
    apiserver: difference(await apiserverRequests(cluster), before),
    dbQueries: counters.dbQueries,
    dbRoundTrips: counters.dbRoundTrips,
    reconciles: counters.reconciles,
    cpu: await cpuSpent(operator, cpuBefore),
  });
  await profiled;
  await allocationsSampled;
  const eventsDropped = counters.eventsDropped;
  const sizes = await storedSizes(cluster, namespaceName(0), integrationName(0, 0), targetName(0, 0));
  log(`all ${expected} Synced ${(coldMs / 1000).toFixed(1)} s after the operator started (${eventsDropped} Events dropped)`);

  // 2. steady state
  // RSS once the queue has been empty for 5 s, then every 2 s for a minute (V8 gives back heap pages
  // gradually once allocation stops); the figure is the last one.
  await quiet(operator, 5_000, 600_000);
  for (let sample = 0; sample < 30; sample++) {
    rss.push(rssMiB(operator.process.pid!));
    await new Promise((resolve) => setTimeout(resolve, 2_000));
  }
  const heap = await operatorCounters(operator);
  heapNote = `V8 heap used ${heap.heapUsedMiB.toFixed(0)} MiB of ${heap.heapTotalMiB.toFixed(0)} MiB`;
  log(`steady-state RSS ${rss.at(-1)!.toFixed(0)} MiB (right after the sync ${rss[0]!.toFixed(0)}, max ${Math.max(...rss).toFixed(0)}; ${heapNote})`);
  if (process.env.BENCH_HEAP_SNAPSHOT) {
    operator.process.kill('SIGUSR2');
    await new Promise((resolve) => setTimeout(resolve, 20_000));
  }
  await operator.stop();

  // 3. full resync, nothing changed
  before = await apiserverRequests(cluster);
  cpuBefore = await cpuReading();
  started = Date.now();
  operator = await startOperator();
  for (;;) {
    counters = await operatorCounters(operator);
    const integrationReconciles = total(counters.reconciles, (key) => key.startsWith('Integration '));
    if (integrationReconciles >= expected && counters.queue === 0) break;
    if (Date.now() - started > limitMs) throw new Error('the resync did not finish');
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  const resyncMs = Date.now() - started;
  counters = await operatorCounters(operator);
  phases.push({
    name: 'restart = full resync, nothing changed',
    seconds: resyncMs / 1000,
    apiserver: difference(await apiserverRequests(cluster), before),
    dbQueries: counters.dbQueries,
    dbRoundTrips: counters.dbRoundTrips,
    reconciles: counters.reconciles,
    cpu: await cpuSpent(operator, cpuBefore),
  });
  rss.push(rssMiB(operator.process.pid!));
  log(`resync of ${expected} done in ${(resyncMs / 1000).toFixed(1)} s`);
  await operator.stop();

  const describe = (counts: Map<string, number>) =>
    [...counts]
      .sort((a, b) => b[1] - a[1])
      .slice(0, 8)
      .map(([key, value]) => `${key.trim().replace(/ +/g, ' ')} ${value}`)
      .join(', ');
  const secretWrites = (phase: Phase) => total(phase.apiserver, (key) => /^(APPLY|PATCH|PUT|POST|CREATE|UPDATE) secrets( |$)/.test(key));
  // what the Integrations themselves cost: the requests on them and their Secrets, not the fleet's listings or the SecretsProjects'
  // (not the installation key's own Secret in the operator's namespace: the first sync reads it and, at the cold start, applies it)
  const onIntegrations = (key: string) => /^(?!LIST |WATCH |GET secrets)\S+ (integrations|secrets)( |$)/.test(key);
  const integrationRequests = (phase: Phase) => total(phase.apiserver, onIntegrations) - (phase === phases[0] ? 1 : 0);
  const statusWrites = (phase: Phase) => total(phase.apiserver, (key) => /^(PATCH|PUT|APPLY) integrations status/.test(key));
  const rows = phases.map((phase) => [
    phase.name,
    phase.seconds.toFixed(1),
    total(phase.apiserver),
    (total(phase.apiserver) / expected).toFixed(2),
    (integrationRequests(phase) / expected).toFixed(2),
    (statusWrites(phase) / expected).toFixed(2),
    secretWrites(phase),
    phase.dbQueries,
    (phase.dbQueries / expected).toFixed(1),
    // — : a commit without the metric
    phase.dbRoundTrips > 0 ? (phase.dbRoundTrips / expected).toFixed(1) : '—',
    [...phase.cpu].map(([name, seconds]) => `${name} ${seconds.toFixed(0)}`).join(', '),
    describe(phase.reconciles),
  ]);
  const [cold, resync] = phases as [Phase, Phase];
  const steady = rss[29]!;
  const check = (ok: boolean) => (ok ? '✅ met' : '❌ missed');
  appendResults(`Scale: ${expected} Integrations, ${shape.projects} projects, ${shape.namespaces} namespaces (PostgreSQL, test control plane)`, [
    `Machine: ${machine(storage)}; etcd + kube-apiserver v1.35 on 127.0.0.1 (no controller manager). Load average at start: ${loadAtStart}, at the end: ${loadAverage()}.`,
    ...(measured
      ? [
          `**Measured: commit ${measured.sha}** (--commit: its server, operator and CRDs, built in a temporary worktree; the bench is the commit above).${measured.notes.length > 0 ? ` Note: ${measured.notes.join('; ')}.` : ''}`,
        ]
      : []),
    `${shape.secretsPerProject} secrets per project (dev, /); operator: one \`coffer serve\` (leader election off, concurrency ${process.env.COFFER_OPERATOR_CONCURRENCY ?? 'default'}, log level ${process.env.BENCH_LOG_LEVEL ?? 'warn'}; ${nodeSetup}${profileDir ? ', --cpu-prof' : ''}). apiserver requests: apiserver_request_total deltas over the phase (includes the bench’s own paged LISTs of Integrations); DB statements and round trips: the operator's coffer_db_queries_total and coffer_db_round_trips_total (a BEGIN or COMMIT sent with a statement is a statement, not a round trip); CPU seconds: what each process used over the phase (/proc; PostgreSQL: the backends serving the bench database).${apiserverProfileDir ? ' The kube-apiserver ran with --profiling (BENCH_APISERVER_PROF).' : ''}`,
    '',
    ...table(
      [
        'phase',
        'seconds',
        'apiserver requests',
        'per Integration',
        'on Integrations and Secrets, per Integration',
        'status writes per Integration',
        'Secret writes',
        'DB statements',
        'per Integration',
        'DB round trips per Integration',
        'CPU seconds',
        'reconciles',
      ],
      rows,
    ),
    '',
    `apiserver requests by verb/resource, cold start: ${describe(cold.apiserver)}; resync: ${describe(resync.apiserver)}; on Integrations and Secrets at the cold start: ${describe(new Map([...cold.apiserver].filter(([key]) => onIntegrations(key))))}. Events the operator dropped during the cold start (coffer_operator_events_dropped_total): ${eventsDropped}. As stored after the cold start: ${sizes}.`,
    '',
    `Targets: all Synced ≤ 90 s: **${cold.seconds.toFixed(1)} s** ${check(cold.seconds <= 90)}; apiserver requests per Integration ≤ 3, on the Integration and its Secret: **${(integrationRequests(cold) / expected).toFixed(2)}** ${check(integrationRequests(cold) <= 3 * expected)} (all requests of the phase, the SecretsProjects' and the bench's own listings included: ${(total(cold.apiserver) / expected).toFixed(2)}); at most one status write per Integration: **${(statusWrites(cold) / expected).toFixed(2)}** ${check(statusWrites(cold) <= expected)}; RSS ≤ 300 MB at steady state (a minute after the sync): **${steady.toFixed(0)} MiB** ${check(steady * 1.048576 <= 300)} (right after the sync ${rss[0]!.toFixed(0)} MiB, max ${Math.max(...rss.slice(0, 30)).toFixed(0)} MiB; ${heapNote}; a process restarted onto the synced fleet, after its resync: ${rss.at(-1)!.toFixed(0)} MiB); zero Secret writes when nothing changed: **${secretWrites(resync)}** ${check(secretWrites(resync) === 0)}.`,
  ]);
} finally {
  await database.drop().catch(() => {});
  await cluster.plane.stop();
  measured?.remove();
}
process.exit(0);
