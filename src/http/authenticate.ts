import type { FastifyInstance, FastifyRequest } from 'fastify';
import { type Actor, detectUserAgentType, type RequestOrigin } from '../actor/actor.ts';
import type { AuthService } from '../auth/auth-service.ts';
import type { AccessWatch } from '../caches/access-watch.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by the authentication hook on every protected route. */
    actor: Actor;
    /** AccessWatch's generation, read just before the caller was authenticated (a held request compares it). */
    accessSeen: number;
    /** Set by `loginTokenHook` on the routes that choose an organization: the user who logged in (undefined: not a user). */
    loginUserId: string | undefined;
  }
}

export function requestOrigin(request: FastifyRequest): RequestOrigin {
  const userAgent = request.headers['user-agent'] ?? null;
  return { ip: request.ip ?? null, userAgent, userAgentType: detectUserAgentType(userAgent) };
}

/** Adds a hook to this plugin scope that resolves the bearer token into `request.actor`. */
export function requireAuthentication(app: FastifyInstance, auth: AuthService, accessWatch: AccessWatch): void {
  app.addHook('onRequest', async (request) => {
    request.accessSeen = accessWatch.generation;
    request.actor = await auth.authenticate(request.headers.authorization, requestOrigin(request));
  });
}

/** An onRequest hook for the routes a login token may call: resolves it (or a user session) into `request.loginUserId`. */
export function loginTokenHook(auth: AuthService) {
  return async (request: FastifyRequest) => {
    request.loginUserId = await auth.userOfLoginToken(request.headers.authorization, requestOrigin(request));
  };
}
