import Fastify, { type FastifyInstance } from 'fastify';
import { sql } from 'kysely';
import type { Registry } from 'prom-client';
import { listMigrations, pendingMigrations } from '../db/migrate.ts';
import type { Services } from '../services/container.ts';

/** Liveness, readiness and metrics, on their own port so they never need a token. */
export function buildProbeApp(services: Services, registry: Registry): FastifyInstance {
  const app = Fastify({ logger: false });
  const shipped = listMigrations();
  app.get('/healthz', async () => ({ status: 'ok' }));
  app.get('/readyz', async (_request, reply) => {
    try {
      await sql`SELECT 1`.execute(services.db);
      const pending = await pendingMigrations(services.db, shipped);
      if (pending.length > 0) return reply.status(503).send({ status: 'not ready', reason: `pending migrations: ${pending.join(', ')}` });
      return { status: 'ready' };
    } catch {
      return reply.status(503).send({ status: 'not ready', reason: 'database unreachable' });
    }
  });
  app.get('/metrics', async (_request, reply) => {
    reply.header('content-type', registry.contentType);
    return registry.metrics();
  });
  return app;
}
