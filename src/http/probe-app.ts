import Fastify, { type FastifyInstance } from 'fastify';
import type { Registry } from 'prom-client';
import type { Services } from '../app/container.ts';
import { listMigrations, readinessProblem } from '../app/readiness.ts';
import { metricsText } from './metrics.ts';

/** A readiness check answers within this, whatever the database does (the manifests give the probe 3 s). */
const READINESS_DEADLINE_MS = 2_000;

/**
 * Liveness, readiness and metrics, on their own port so they never need a
 * token. `componentProblem`: why another part of the process (the operator)
 * cannot work, or null; readiness fails with it too.
 */
export function buildProbeApp(services: Services, registry: Registry, componentProblem: () => string | null = () => null): FastifyInstance {
  const app = Fastify({ logger: false });
  const shipped = listMigrations();
  app.get('/healthz', async () => ({ status: 'ok' }));
  app.get('/readyz', async (_request, reply) => {
    const problem = (await withDeadline(readinessProblem(services.db, shipped), READINESS_DEADLINE_MS, 'database did not answer in time')) ?? componentProblem();
    if (problem) return reply.status(503).send({ status: 'not ready', reason: problem });
    return { status: 'ready' };
  });
  app.get('/metrics', async (request, reply) => {
    reply.header('content-type', registry.contentType);
    return metricsText(registry, request.query);
  });
  return app;
}

function withDeadline(check: Promise<string | null>, ms: number, late: string): Promise<string | null> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<string>((resolve) => {
    timer = setTimeout(() => resolve(late), ms);
  });
  return Promise.race([check, deadline]).finally(() => clearTimeout(timer));
}
