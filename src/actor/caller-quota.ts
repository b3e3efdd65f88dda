import { RateLimitError, TooManyRequestsError } from '../errors.ts';
import type { Actor } from './actor.ts';

/** How many held requests of one kind one caller, and one organization, may have under way at once. */
export interface HeldRequestLimit {
  perCaller: number;
  perOrganization: number;
}

/** The kinds of held requests (a stream or a wait keeps its request open) and their shipped limits. */
export const HELD_REQUEST_LIMITS = {
  /** POST /api/v1/events/subscribe/project-events, across all projects. */
  projectEventStreams: { perCaller: 100, perOrganization: 500 },
  /** GET /api/v1/changes/stream. */
  changeStreams: { perCaller: 20, perOrganization: 200 },
  /** GET /api/v1/changes/wait. */
  revisionWaits: { perCaller: 20, perOrganization: 200 },
} satisfies Record<string, HeldRequestLimit>;

export type HeldRequestKind = keyof typeof HELD_REQUEST_LIMITS;

/** What a held request is called in a refusal ("change streams", "waits"), and how to free a place. */
export interface QuotaWording {
  noun: string;
  /** What the caller can do about its own: "close one before opening another". */
  remedy: string;
}

interface Holding {
  /** When it ends at the latest (a wait's timeout); Infinity for a stream, which ends when its client goes. */
  endsAt: number;
}

/**
 * The one owner of the caps on held requests (change streams, project-event
 * streams, revision waits): each caller (user or machine identity) and each
 * organization may hold a limited number of one kind at once, across all
 * projects. One more is refused with 429 `RateLimitExceeded` before any work,
 * with a Retry-After when the holdings that fill the cap end by themselves
 * (waits time out); a stream ends only when its client closes it.
 *
 * The organization's cap bounds what one organization costs the server, so a
 * stranger in another organization is never refused for someone else's usage;
 * the caller's cap is a fraction of it, so one identity cannot fill its
 * organization's cap alone (an administrator who makes many identities can:
 * the organization is theirs to run).
 */
export class CallerQuota {
  readonly #limit: HeldRequestLimit;
  readonly #wording: QuotaWording;
  readonly #byCaller = new Map<string, Set<Holding>>();
  readonly #byOrganization = new Map<string, Set<Holding>>();

  constructor(limit: HeldRequestLimit, wording: QuotaWording) {
    this.#limit = limit;
    this.#wording = wording;
  }

  /** Held by the caller now. */
  heldBy(actor: Actor): number {
    return this.#byCaller.get(callerKey(actor))?.size ?? 0;
  }

  /** Held by the organization now. */
  heldIn(orgId: string): number {
    return this.#byOrganization.get(orgId)?.size ?? 0;
  }

  /**
   * Takes a place for the actor (429 when it, or its organization, holds the
   * limit already); the answer gives it back, once. `endsAt`: when the held
   * request ends at the latest, if it does by itself.
   */
  take(actor: Actor, endsAt = Infinity): () => void {
    const caller = callerKey(actor);
    const mine = this.#byCaller.get(caller);
    const ours = this.#byOrganization.get(actor.orgId);
    const { noun, remedy } = this.#wording;
    if (mine && mine.size >= this.#limit.perCaller) {
      throw refusal(`At most ${this.#limit.perCaller} ${noun} may be under way per caller; ${remedy}.`, mine);
    }
    if (ours && ours.size >= this.#limit.perOrganization) {
      throw refusal(`At most ${this.#limit.perOrganization} ${noun} may be under way per organization; try again once some have ended.`, ours);
    }
    const holding: Holding = { endsAt };
    add(this.#byCaller, caller, holding);
    add(this.#byOrganization, actor.orgId, holding);
    let returned = false;
    return () => {
      if (returned) return;
      returned = true;
      remove(this.#byCaller, caller, holding);
      remove(this.#byOrganization, actor.orgId, holding);
    };
  }
}

function callerKey(actor: Actor): string {
  return `${actor.kind}:${actor.id}`;
}

/** A refusal; with Retry-After (seconds until the first holding ends) when every holding ends by itself. */
function refusal(message: string, holdings: Set<Holding>): Error {
  let first = Infinity;
  for (const holding of holdings) first = Math.min(first, holding.endsAt);
  if (!Number.isFinite(first)) return new RateLimitError(message);
  return new TooManyRequestsError(message, Math.max(1, Math.ceil((first - Date.now()) / 1000)));
}

function add(map: Map<string, Set<Holding>>, key: string, holding: Holding): void {
  let set = map.get(key);
  if (!set) map.set(key, (set = new Set()));
  set.add(holding);
}

function remove(map: Map<string, Set<Holding>>, key: string, holding: Holding): void {
  const set = map.get(key);
  if (!set) return;
  set.delete(holding);
  if (set.size === 0) map.delete(key);
}
