import type { FastifyInstance } from 'fastify';
import { collectDefaultMetrics, Counter, Histogram, Registry } from 'prom-client';

export interface HttpMetrics {
  registry: Registry;
}

/** Request counts and latency by route template and status, on the app's own registry. */
export function registerHttpMetrics(app: FastifyInstance): HttpMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'coffer_' });
  const labelNames = ['method', 'route', 'status_code'] as const;
  const requests = new Counter({ name: 'coffer_http_requests_total', help: 'HTTP requests served', labelNames, registers: [registry] });
  const duration = new Histogram({
    name: 'coffer_http_request_duration_seconds',
    help: 'HTTP request latency',
    labelNames,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers: [registry],
  });
  app.addHook('onResponse', async (request, reply) => {
    const labels = { method: request.method, route: request.routeOptions.url ?? 'unmatched', status_code: String(reply.statusCode) };
    requests.inc(labels);
    duration.observe(labels, reply.elapsedTime / 1000);
  });
  return { registry };
}

/**
 * The text exposition of `registry`, or only of the metrics `name[]` names (`/metrics?name[]=a&name[]=b`, as
 * Prometheus' Python client answers; an unknown name adds nothing): a poller that reads the operator's queue
 * length need not have every per-resource series rendered, which at 10,000 Integrations takes the process
 * a quarter of a second and 9 MB each time.
 */
export async function metricsText(registry: Registry, query: unknown): Promise<string> {
  const named = (query as Record<string, unknown> | undefined)?.['name[]'];
  if (named === undefined) return registry.metrics();
  const names = (Array.isArray(named) ? named : [named]).filter((name): name is string => typeof name === 'string');
  const known = names.filter((name, index) => registry.getSingleMetric(name) !== undefined && names.indexOf(name) === index);
  const texts = await Promise.all(known.map((name) => registry.getSingleMetricAsString(name)));
  return texts.map((text) => `${text}\n`).join('');
}

/** Statements the process has run on its database, and the round trips they took (benchmarks divide them by the work done). */
export function registerDatabaseMetrics(registry: Registry, database: { queryCount: () => number; roundTrips: () => number }): void {
  new Counter({
    name: 'coffer_db_queries_total',
    help: 'SQL statements run on the database (BEGIN and COMMIT included)',
    registers: [registry],
    collect() {
      this.reset();
      this.inc(database.queryCount());
    },
  });
  new Counter({
    name: 'coffer_db_round_trips_total',
    help: 'Messages sent to the database and answered (PostgreSQL: a BEGIN or COMMIT sent with a statement in one; PGlite: every statement)',
    registers: [registry],
    collect() {
      this.reset();
      this.inc(database.roundTrips());
    },
  });
}

/** Secret rotation runs since start, by rotation type and outcome (`completed`, `failed`). */
export function registerRotationMetrics(registry: Registry, rotations: { outcomes: ReadonlyMap<string, number> }): void {
  new Counter({
    name: 'coffer_secret_rotation_runs_total',
    help: 'Secret rotation runs, by type and outcome',
    labelNames: ['type', 'outcome'] as const,
    registers: [registry],
    collect() {
      this.reset();
      for (const [key, count] of rotations.outcomes) {
        const [type, outcome] = key.split(':') as [string, string];
        this.inc({ type, outcome }, count);
      }
    },
  });
}
