import { AppError } from '../../errors.ts';
import type { ConditionReason } from '../runtime/condition-reason.ts';
import type { Failure } from '../runtime/controller.ts';
import { NotReadyError } from './context.ts';

/** The codes of Coffer's 403s that say a namespace may not use a project (project claims and grants): each is a condition reason. */
const ACCESS_REFUSALS: readonly ConditionReason[] = ['GrantMissing', 'GrantRevoked', 'ProjectClaimed', 'Forbidden', 'ProjectNotReady'];

function isAccessRefusal(code: string): code is (typeof ACCESS_REFUSALS)[number] {
  return (ACCESS_REFUSALS as readonly string[]).includes(code);
}

/** How long a resource waits for Coffer to answer again (its change stream also catches up when it does). */
export const UNAVAILABLE_RETRY_MS = 10_000;

/** How long a refused request waits before it is tried again (the refusal stands until someone acts). */
export const REFUSED_RETRY_MS = 60_000;

/** A refusal of the port's project claims as the operator reports it: its code is the condition's reason. */
export function asNotReady(error: unknown): unknown {
  if (!(error instanceof AppError && error.statusCode === 403 && isAccessRefusal(error.code))) return error;
  return new NotReadyError(error.code, error.message, { afterMs: error.code === 'ProjectNotReady' ? 5_000 : REFUSED_RETRY_MS });
}

/**
 * The Failure an error stands for: a NotReadyError as it says, Coffer
 * unavailable (503: its server unreachable, its database away) as `CofferUnavailable`, a request
 * Coffer refused (4xx) as `Rejected` (`NotFound` for a 404 when
 * `notFoundReason` is given). Anything else (Coffer or the apiserver
 * unreachable, a bug) is not a Failure: undefined, and the caller throws it
 * on to be retried with backoff.
 */
export function toFailure(error: unknown, notFoundReason?: ConditionReason): Failure | undefined {
  if (error instanceof NotReadyError) return { reason: error.reason, message: error.message, retry: error.retry };
  if (error instanceof AppError && error.statusCode === 401) {
    return {
      reason: 'CofferAuthFailed',
      message: `Coffer refused the operator's credentials (${error.message}); nothing is synced until they are valid again`,
      retry: { afterMs: REFUSED_RETRY_MS },
    };
  }
  if (error instanceof AppError && error.statusCode === 503) {
    return {
      reason: 'CofferUnavailable',
      message: `${error.message}; the Secret keeps its last data until Coffer answers again`,
      retry: { afterMs: UNAVAILABLE_RETRY_MS },
    };
  }
  if (!(error instanceof AppError && error.statusCode < 500)) return undefined;
  const reason = notFoundReason && isCofferNotFound(error) ? notFoundReason : 'Rejected';
  return { reason, message: error.message, retry: { afterMs: REFUSED_RETRY_MS } };
}

/** Coffer answered 404: what was asked for is not there (the apiserver's 404 is kube-api.ts's isKubeNotFound). */
export function isCofferNotFound(error: unknown): boolean {
  return error instanceof AppError && error.statusCode === 404;
}

/** For a `.catch()` of a Coffer call: what is already gone in Coffer is no failure. */
export function ignoreCofferNotFound(error: unknown): undefined {
  if (isCofferNotFound(error)) return undefined;
  throw error;
}
