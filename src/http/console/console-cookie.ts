import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ForbiddenError, UnauthorizedError } from '../../errors.ts';

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

/**
 * The value of one cookie of a Cookie header; undefined when absent or not a token's characters. Two cookies of
 * the name are refused: a page of a sibling domain can set one for a parent domain or a narrower path, which the
 * browser sends beside (and before) Coffer's own, to fix the victim into the setter's session.
 */
export function cookieValue(header: string | undefined, name: string): string | undefined {
  const values = (header ?? '')
    .split(';')
    .map((part) => [part.slice(0, Math.max(0, part.indexOf('='))).trim(), part.slice(part.indexOf('=') + 1).trim()] as const)
    .filter(([key]) => key === name)
    .map(([, value]) => value);
  if (values.length > 1) {
    throw new UnauthorizedError(
      `More than one '${name}' cookie came with the request (one may have been set by another site of the domain): clear this site's cookies and sign in again`,
      'ConsoleCookieAmbiguous',
    );
  }
  const value = values[0];
  return value !== undefined && COOKIE_VALUE.test(value) ? value : undefined;
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

/**
 * Secure unless the browser reached Coffer on a loopback address over plain http (development, a port-forward):
 * behind a TLS-terminating ingress the request arrives as http unless the proxy is trusted, and the session must
 * still never travel in clear text.
 */
function cookieText(request: FastifyRequest, value: string, maxAgeSeconds: number): string {
  const secure = request.protocol === 'https' || !isLoopbackHost(request.hostname) ? '; Secure' : '';
  return `${CONSOLE_COOKIE}=${value}; Path=${COOKIE_PATH}; Max-Age=${maxAgeSeconds}; HttpOnly; SameSite=Strict${secure}`;
}

function isLoopbackHost(hostname: string): boolean {
  const host = (hostname.startsWith('[') ? hostname.slice(1, hostname.indexOf(']')) : hostname.replace(/:\d+$/, '')).toLowerCase();
  return host === 'localhost' || host.endsWith('.localhost') || host === '::1' || /^127\.\d+\.\d+\.\d+$/.test(host);
}
