import { AsyncResource } from 'node:async_hooks';
import type { FastifyRequest } from 'fastify';
import type { Actor } from '../actor/actor.ts';
import type { AuthService } from '../auth/auth-service.ts';
import type { AccessWatch } from '../caches/access-watch.ts';
import { requestOrigin } from './authenticate.ts';

/** A held request's watch on its caller's access. */
export interface AccessEnded {
  /** Aborts, with the refusal as its reason (401, 403, 404), once the caller may no longer make the request. */
  signal: AbortSignal;
  stop(): void;
}

/**
 * For a request held open (a revision wait): whenever a write that may end
 * access commits (caches/access-watch.ts), authenticates the request's token
 * again and runs `check` with the caller it finds; the first refusal aborts
 * the signal. Event streams do the same through their recheck (sse.ts).
 */
export async function watchAccess(
  request: FastifyRequest,
  deps: { auth: AuthService; accessWatch: AccessWatch },
  check: (actor: Actor) => Promise<void>,
): Promise<AccessEnded> {
  const controller = new AbortController();
  let checking: Promise<void> | null = null;
  let again = false;
  const recheck = async (): Promise<void> => {
    do {
      again = false;
      try {
        await check(await deps.auth.authenticate(request.headers.authorization, requestOrigin(request)));
      } catch (error) {
        controller.abort(error);
        return;
      }
    } while (again && !controller.signal.aborted);
  };
  const wake = () => {
    if (controller.signal.aborted) return;
    if (checking) {
      again = true;
      return;
    }
    checking = recheck().finally(() => {
      checking = null;
    });
  };
  // woken at once when access may have ended since the caller was authenticated
  const stop = await deps.accessWatch.subscribe(AsyncResource.bind(wake), request.accessSeen);
  return { signal: controller.signal, stop };
}
