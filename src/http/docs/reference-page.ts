import Fastify, { type FastifyInstance } from 'fastify';
import type { ZodApp } from '../zod-app.ts';

/** Response headers the forwarding reply sets itself. */
const HOP_HEADERS = new Set(['content-length', 'transfer-encoding', 'connection', 'keep-alive']);

/**
 * Scalar's settings for a self-hosted secrets server: titled Coffer, and none
 * of the hosted service's controls (Ask AI, MCP, the developer toolbar with its
 * Deploy and Share buttons, the "Open API client" button), no telemetry, and
 * no fonts fetched from a CDN (the page works offline).
 */
export const referenceConfiguration = {
  title: 'Coffer',
  pageTitle: 'Coffer API reference',
  agent: { disabled: true },
  mcp: { disabled: true },
  showDeveloperTools: 'never',
  hideClientButton: true,
  telemetry: false,
  withDefaultFonts: false,
  defaultOpenFirstTag: true,
  orderRequiredPropertiesFirst: true,
} as const;

/**
 * The API reference UI (/api/docs, its script, /api/docs/openapi.json and .yaml) comes from
 * @scalar/fastify-api-reference, which holds ~40 MiB in memory once imported: it is loaded on
 * the first visit, into a Fastify instance of its own that these routes forward to.
 */
export function registerReferencePage(app: ZodApp): void {
  let reference: Promise<FastifyInstance> | undefined;
  const load = async () => {
    const { default: scalar } = await import('@scalar/fastify-api-reference');
    const ui = Fastify({ logger: false, routerOptions: { ignoreTrailingSlash: true } });
    await ui.register(scalar, { routePrefix: '/api/docs', configuration: { ...referenceConfiguration, content: () => app.swagger() } });
    await ui.ready();
    return ui;
  };
  for (const url of ['/api/docs', '/api/docs/*']) {
    app.get(url, { schema: { hide: true } }, async (request, reply) => {
      reference ??= load().catch((error: unknown) => {
        reference = undefined;
        throw error;
      });
      const response = await (await reference).inject({ method: 'GET', url: request.url, headers: request.headers });
      for (const [name, value] of Object.entries(response.headers)) if (!HOP_HEADERS.has(name) && value !== undefined) reply.header(name, value);
      return reply.code(response.statusCode).send(response.rawPayload);
    });
  }
}
