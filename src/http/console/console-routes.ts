import type { FastifyReply, FastifyRequest } from 'fastify';
import { NotFoundError } from '../../errors.ts';
import type { ZodApp } from '../zod-app.ts';
import { CONSOLE_CSP, type ConsoleFile, type ConsoleFiles } from './console-files.ts';

/** The path of an API route, a reference page or a probe: never answered with the console's page. */
const API_PATH = /^\/api(\/|$)/;

function send(reply: FastifyReply, file: ConsoleFile) {
  return reply
    .header('content-type', file.contentType)
    .header('cache-control', file.cacheControl)
    .header('content-security-policy', CONSOLE_CSP)
    .header('x-content-type-options', 'nosniff')
    .header('referrer-policy', 'no-referrer')
    .send(file.body);
}

/** A browser opening a console path (not an API one) gets the console's page; its router shows the screen. */
export function consolePageFor(files: ConsoleFiles | undefined, request: FastifyRequest): ConsoleFile | undefined {
  if (!files || (request.method !== 'GET' && request.method !== 'HEAD')) return undefined;
  const urlPath = request.url.split('?')[0] ?? '/';
  if (API_PATH.test(urlPath) || !request.headers.accept?.includes('text/html')) return undefined;
  return files.get('/index.html');
}

export function sendConsolePage(reply: FastifyReply, page: ConsoleFile) {
  return send(reply, page);
}

/** The console's hashed assets and its top-level files (favicon); unknown names answer 404. */
export function consoleAssetRoutes(app: ZodApp, files: ConsoleFiles): void {
  app.get('/assets/*', { schema: { hide: true } }, async (request, reply) => {
    const file = files.get(request.url.split('?')[0] ?? '');
    if (!file) throw new NotFoundError('No such console file', 'NotFound');
    return send(reply, file);
  });
  for (const [urlPath, file] of files) {
    if (urlPath.startsWith('/assets/') || urlPath === '/index.html') continue;
    app.get(urlPath, { schema: { hide: true } }, async (_request, reply) => send(reply, file));
  }
}
