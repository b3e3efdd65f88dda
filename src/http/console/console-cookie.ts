import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ForbiddenError } from '../../errors.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** The request was authenticated by the console's session cookie (not by an Authorization header). */
    viaConsole: boolean;
  }
}

/** The console's session cookie: a user access token, HttpOnly, SameSite=Strict, sent to the API only. */
export const CONSOLE_COOKIE = 'coffer_console';
/** The header every cookie-authenticated request must carry (docs/threat-model.md, "The web console"). */
export const CONSOLE_HEADER = 'x-coffer-console';

const COOKIE_PATH = '/api';
const COOKIE_VALUE = /^[A-Za-z0-9._-]+$/;

/** The value of one cookie of a Cookie header; undefined when absent or not a token's characters. */
export function cookieValue(header: string | undefined, name: string): string | undefined {
  for (const part of (header ?? '').split(';')) {
    const separator = part.indexOf('=');
    if (separator < 0 || part.slice(0, separator).trim() !== name) continue;
    const value = part.slice(separator + 1).trim();
    return COOKIE_VALUE.test(value) ? value : undefined;
  }
  return undefined;
}

export function requireConsoleHeader(request: FastifyRequest): void {
  if (request.headers[CONSOLE_HEADER] !== '1') {
    throw new ForbiddenError(`A request with the console's session cookie must send the header '${CONSOLE_HEADER}: 1'`, 'ConsoleHeaderMissing');
  }
}

/**
 * A request without an Authorization header that carries the console's cookie is authenticated by it: after
 * the CSRF header check, the cookie's token becomes the request's bearer credential, which the routes verify as
 * any other. Runs before every route's own hooks.
 */
export function registerConsoleCookie(app: FastifyInstance): void {
  app.decorateRequest('viaConsole', false);
  app.addHook('onRequest', async (request) => {
    if (request.headers.authorization) return;
    const token = cookieValue(request.headers.cookie, CONSOLE_COOKIE);
    if (!token) return;
    requireConsoleHeader(request);
    request.headers.authorization = `Bearer ${token}`;
    request.viaConsole = true;
  });
}

export function setConsoleCookie(request: FastifyRequest, reply: FastifyReply, token: string, maxAgeSeconds: number): void {
  reply.header('set-cookie', cookieText(request, token, maxAgeSeconds));
}

export function clearConsoleCookie(request: FastifyRequest, reply: FastifyReply): void {
  reply.header('set-cookie', cookieText(request, '', 0));
}

function cookieText(request: FastifyRequest, value: string, maxAgeSeconds: number): string {
  const secure = request.protocol === 'https' ? '; Secure' : '';
  return `${CONSOLE_COOKIE}=${value}; Path=${COOKIE_PATH}; Max-Age=${maxAgeSeconds}; HttpOnly; SameSite=Strict${secure}`;
}
