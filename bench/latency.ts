/**
 * Change-to-Secret latency: the time from a secret update through the API (measured from sending the
 * PATCH, so it includes the API call and its commit) until a watch on the apiserver sees the managed
 * Secret holding the new value, with 1, 100 and 1,000 Integrations present (10 per project, so each
 * change touches the measured Integration and its 9 siblings).
 *
 *   npm run bench:latency [-- --updates 50 --levels 1,100,1000] [--remote]
 *
 * --remote: the server runs without the operator; `coffer operator --server` (a machine identity over
 * HTTP, fed by the change stream) syncs the cluster instead: the figure beside the in-process one.
 *
 * --reload: the measured project's 10 Integrations each name a Deployment that reads KEY_0 of their Secret
 * (spec.reload, debounce 0s): each update rolls 10 Deployments, and the figure is the time until the
 * measured Deployment's pod template carries the new checksum (the rollout as the apiserver records it;
 * there is no kubelet), beside the time until its Secret held the value.
 *
 * Runs the test control plane (etcd + kube-apiserver), a fresh PostgreSQL database, and one
 * `coffer serve` with the operator (the usual single-replica install), which also takes the updates.
 */
import { randomBytes } from 'node:crypto';
import { parseArgs } from 'node:util';
import {
  addReloadingWorkloads,
  createFleet,
  namespaceName,
  startCluster,
  targetName,
  watchIntegrations,
  watchPodTemplateAnnotation,
  watchSecretValue,
  workloadName,
} from './cluster.ts';
import {
  appendResults,
  benchNodeOptions,
  call,
  freshDatabase,
  loadAverage,
  log,
  machine,
  ms,
  percentile,
  postgresVersion,
  rssMiB,
  serverKeys,
  startServer,
  table,
} from './common.ts';

const { values: args } = parseArgs({
  options: {
    updates: { type: 'string', default: '50' },
    levels: { type: 'string', default: '1,100,1000' },
    remote: { type: 'boolean', default: false },
    reload: { type: 'boolean', default: false },
  },
});
const updates = Number(args.updates);
const levels = args.levels.split(',').map(Number);
const PER_PROJECT = 10;

const loadAtStart = loadAverage();
const cluster = await startCluster();
const database = await freshDatabase('latency');
const rows: (string | number)[][] = [];
let p99At1000: number | undefined;
try {
  const storage = `${await postgresVersion()} (local, fresh database)`;
  await cluster.core.createNamespace({ body: { metadata: { name: 'bench-system' } } });
  // BENCH_LOG_LEVEL=debug: the operator's log follows each change from its commit to the Secret (with BENCH_SERVER_LOG)
  const logLevel = process.env.BENCH_LOG_LEVEL ?? 'warn';
  // the server measured runs with the Deployment's heap settings, so its RSS column is the Deployment's
  const nodeOptions = benchNodeOptions();
  const operatorSettings = {
    KUBECONFIG: cluster.plane.kubeconfigPath,
    COFFER_LEADER_ELECTION: 'false',
    COFFER_OPERATOR_NAMESPACE: 'bench-system',
    COFFER_LOG_LEVEL: logLevel,
    NODE_OPTIONS: nodeOptions.value,
  };
  const server = await startServer({
    ...serverKeys(),
    DATABASE_URL: database.url,
    ...operatorSettings,
    COFFER_OPERATOR: args.remote ? 'false' : 'true',
  });
  let remote: Awaited<ReturnType<typeof startServer>> | undefined;
  try {
    const boot = await call(server, 'POST', '/api/v1/admin/bootstrap', undefined, {
      email: 'bench@example.com',
      password: 'a long benchmark password',
      organization: 'Bench',
    });
    const token: string = boot.identity.credentials.token;
    if (args.remote) remote = await startRemoteOperator(server, token, boot.organization.id, operatorSettings);
    const operatorProcess = remote ?? server;
    const integrations = await watchIntegrations(cluster);
    let existing = { projects: 0, namespaces: 0, integrationsPerProject: 0 };
    let measuredProjectId = '';
    for (const level of levels) {
      const projects = Math.max(1, Math.ceil(level / PER_PROJECT));
      const shape = { projects, namespaces: Math.min(projects, 100), integrationsPerProject: Math.min(level, PER_PROJECT), secretsPerProject: 5 };
      const ids = await createFleet(cluster, server, token, shape, existing);
      if (args.reload && !measuredProjectId) await addReloadingWorkloads(cluster, shape, 0, 'KEY_0');
      measuredProjectId ||= ids.get(0)!;
      existing = { projects, namespaces: shape.namespaces, integrationsPerProject: shape.integrationsPerProject };
      const expected = projects * shape.integrationsPerProject;
      const waited = await integrations.allSynced(expected, Date.now(), 900_000);
      log(`${expected} Integrations Synced (waited ${(waited / 1000).toFixed(1)} s)`);
      await new Promise((resolve) => setTimeout(resolve, 3_000));

      const watch = await watchSecretValue(cluster, namespaceName(0), targetName(0, 0), 'KEY_0');
      const rollout = args.reload
        ? await watchPodTemplateAnnotation(cluster, namespaceName(0), workloadName(0, 0), `checksum.coffer.dev/secret-${targetName(0, 0)}`)
        : undefined;
      const latencies: number[] = [];
      // the PATCH's own answer: the API write and its commit (fsync on this PostgreSQL), part of every latency above
      const answers: number[] = [];
      const rollouts: number[] = [];
      try {
        for (let update = 0; update < updates; update++) {
          const value = `v-${level}-${update}-${randomBytes(4).toString('hex')}`;
          const checksumBefore = rollout?.value();
          const sent = performance.now();
          await call(server, 'PATCH', '/api/v3/secrets/raw/KEY_0', token, { workspaceId: measuredProjectId, environment: 'dev', secretPath: '/', secretValue: value });
          answers.push(performance.now() - sent);
          latencies.push((await watch.until(value, 30_000)) - sent);
          if (rollout) rollouts.push((await rollout.untilChangedFrom(checksumBefore, 30_000)) - sent);
          await new Promise((resolve) => setTimeout(resolve, 100 + Math.random() * 100));
        }
      } finally {
        watch.stop();
        rollout?.stop();
      }
      rollouts.sort((a, b) => a - b);
      latencies.sort((a, b) => a - b);
      answers.sort((a, b) => a - b);
      const [p50, p99, max] = [percentile(latencies, 50), percentile(latencies, 99), latencies.at(-1)!];
      if (level === 1000) p99At1000 = p99;
      log(
        `${expected} Integrations: p50 ${ms(p50)} ms, p99 ${ms(p99)} ms, max ${ms(max)} ms (${latencies.length} updates); the PATCH answered: p50 ${ms(percentile(answers, 50))} ms, p99 ${ms(percentile(answers, 99))} ms`,
      );
      const podTemplate = args.reload ? [ms(percentile(rollouts, 50)), ms(percentile(rollouts, 99)), ms(rollouts.at(-1)!)] : [];
      if (args.reload) log(`${expected} Integrations: change → pod template p50 ${podTemplate[0]} ms, p99 ${podTemplate[1]} ms, max ${podTemplate[2]} ms`);
      const answered = [ms(percentile(answers, 50)), ms(percentile(answers, 99))];
      rows.push([expected, latencies.length, ms(p50), ms(p99), ms(max), ...podTemplate, ...answered, rssMiB(operatorProcess.process.pid!).toFixed(0), loadAverage()]);
    }
    await integrations.stop();
  } finally {
    await remote?.stop();
    await server.stop();
  }
  const met = p99At1000 === undefined ? 'n/a' : p99At1000 <= 1000 ? '✅ met' : '❌ missed';
  const who = args.remote
    ? `One \`coffer serve\` without the operator takes the PATCHes; \`coffer operator --server\` (a machine identity over HTTP, universal auth, fed by GET /api/v1/changes/stream; leader election off, log level ${logLevel}, ${nodeOptions.described}) syncs the cluster`
    : `One \`coffer serve\` with the operator (leader election off, log level ${logLevel}, ${nodeOptions.described}) takes the PATCHes and syncs`;
  const what = args.reload ? 'Change-to-pod-template latency (workload reload)' : 'Change-to-Secret latency';
  appendResults(`${what}${args.remote ? ', remote operator over HTTP' : ''} (PostgreSQL, test control plane)`, [
    `Machine: ${machine(storage)}; etcd + kube-apiserver ${'v1.35'} on 127.0.0.1 (no controller manager). Load average at start: ${loadAtStart}.`,
    `${who}; 10 Integrations per project, 5 secrets each, all Synced before measuring; ${updates} sequential updates per level, 100–200 ms apart; latency = PATCH sent → watch event with the new value; PATCH answered = PATCH sent → its answer (the API write and its commit, which every latency includes).`,
    ...(args.reload
      ? [
          "Reload: the measured project's 10 Integrations each name a Deployment reading KEY_0 (spec.reload, debounce 0s), so each update rolls 10 Deployments; pod template = PATCH sent → watch event of the measured Deployment with a new checksum on its pod template.",
        ]
      : []),
    '',
    ...table(
      [
        'Integrations',
        'updates',
        ...(args.reload
          ? ['Secret p50 ms', 'Secret p99 ms', 'Secret max ms', 'pod template p50 ms', 'pod template p99 ms', 'pod template max ms']
          : ['p50 ms', 'p99 ms', 'max ms']),
        'PATCH answered p50 ms',
        'PATCH answered p99 ms',
        `${args.remote ? 'operator' : 'server'} RSS MiB`,
        'load average after',
      ],
      rows,
    ),
    '',
    `Target: p99 ≤ 1 s at 1,000 Integrations: **${p99At1000 === undefined ? 'n/a' : ms(p99At1000)} ms** ${met}.`,
  ]);
} finally {
  await database.drop().catch(() => {});
  await cluster.plane.stop();
}
process.exit(0);

/**
 * A machine identity with universal auth (an org admin, as the in-process operator's identity is), its
 * credentials in the operator's Secret, and `coffer operator --server` with them, naming its cluster `local`
 * (the fleet's namespace grants name the server's default cluster).
 */
async function startRemoteOperator(server: Awaited<ReturnType<typeof startServer>>, token: string, orgId: string, settings: Record<string, string>) {
  const { identity } = await call(server, 'POST', '/api/v1/identities', token, { name: 'bench-remote-operator', organizationId: orgId, role: 'admin' });
  const { identityUniversalAuth } = await call(server, 'POST', `/api/v1/auth/universal-auth/identities/${identity.id}`, token, {});
  const { clientSecret } = await call(server, 'POST', `/api/v1/auth/universal-auth/identities/${identity.id}/client-secrets`, token, {});
  await cluster.core.createNamespacedSecret({
    namespace: 'bench-system',
    body: { metadata: { name: 'coffer-operator-credentials' }, stringData: { clientId: identityUniversalAuth.clientId, clientSecret } },
  });
  return startServer({ ...settings, COFFER_SERVER: server.api, COFFER_CLUSTER_NAME: 'local' }, { command: 'operator' });
}
