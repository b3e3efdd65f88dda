import type { Logger } from 'pino';
import { apiStatus, describePermissions, type KubeApi, type Permission } from './kube-api.ts';
import type { OperatorMetrics } from './metrics.ts';

/** How often the permissions are checked again while the operator runs. */
const RECHECK_MS = 5 * 60_000;

/**
 * Whether the operator can work, for /readyz and the coffer_operator_ready
 * metric: every permission it needs granted (SelfSubjectAccessReviews, at
 * start, every five minutes, and when a watch is refused or works again),
 * no watch refused, and (for an operator in another cluster) the Coffer
 * server reachable and accepting its credentials. An apiserver that cannot be reached says nothing
 * about that (a blip must not take the API replicas out of service). Each
 * change is logged once.
 */
export class OperatorHealth {
  readonly #kube: KubeApi;
  readonly #needs: readonly Permission[];
  readonly #logger: Logger;
  readonly #metrics: Pick<OperatorMetrics, 'ready'> | undefined;
  readonly #refusedWatches = new Set<string>();
  #missing: Permission[] = [];
  /** Why Coffer cannot be used (an operator in another cluster: the server unreachable, or its credentials refused), or null. */
  #cofferProblem: string | null = null;
  #timer: NodeJS.Timeout | null = null;
  #checking: Promise<void> | null = null;
  #lastProblem: string | null = null;
  /** The Coffer part of the last problem logged. */
  #lastCofferProblem: string | null = null;

  constructor(kube: KubeApi, needs: readonly Permission[], logger: Logger, metrics?: Pick<OperatorMetrics, 'ready'>) {
    this.#kube = kube;
    this.#needs = needs;
    this.#logger = logger;
    this.#metrics = metrics;
  }

  /** Checks now and then every few minutes. */
  async start(): Promise<void> {
    await this.check();
    this.#timer = setInterval(() => void this.check(), RECHECK_MS);
    this.#timer.unref();
  }

  stop(): void {
    if (this.#timer) clearInterval(this.#timer);
  }

  /** Why the operator cannot work, or null. */
  problem(): string | null {
    const parts: string[] = [];
    if (this.#missing.length > 0) parts.push(`the operator lacks Kubernetes permissions (RBAC): ${describePermissions(this.#missing)}`);
    if (this.#refusedWatches.size > 0) parts.push(`the apiserver refuses the operator's watches on ${[...this.#refusedWatches].join(', ')}`);
    if (this.#cofferProblem) parts.push(this.#cofferProblem);
    return parts.length > 0 ? parts.join('; ') : null;
  }

  /** Checks every needed permission (concurrent calls share one check). */
  check(): Promise<void> {
    this.#checking ??= this.#check().finally(() => {
      this.#checking = null;
    });
    return this.#checking;
  }

  /** Coffer could not be used (why), or can again (null). */
  cofferUnavailable(problem: string | null): void {
    if (this.#cofferProblem === problem) return;
    this.#cofferProblem = problem;
    this.#changed();
  }

  watchFailed(resource: string, error: unknown): void {
    const status = apiStatus(error);
    if (status !== 401 && status !== 403) return;
    this.#refusedWatches.add(resource);
    this.#changed();
    void this.check();
  }

  watchWorking(resource: string): void {
    if (!this.#refusedWatches.delete(resource)) return;
    this.#changed();
    void this.check();
  }

  async #check(): Promise<void> {
    try {
      this.#missing = await this.#kube.missingPermissions(this.#needs);
    } catch (error) {
      this.#logger.debug({ error: String(error) }, 'could not check the operator’s permissions; keeping the last answer');
      return;
    }
    this.#changed();
  }

  #changed(): void {
    const problem = this.problem();
    this.#metrics?.ready(problem === null);
    if (problem === this.#lastProblem) return;
    if (problem)
      this.#logger.error(
        `${problem}; /readyz answers 503 until this is fixed${this.#cofferProblem === problem ? '' : " (deploy/common/rbac.yaml, or the chart's rbac values)"}`,
      );
    else if (this.#lastProblem === this.#lastCofferProblem) this.#logger.info('the operator reaches Coffer again');
    else if (this.#lastProblem) this.#logger.info('the operator has every permission it needs again');
    this.#lastProblem = problem;
    this.#lastCofferProblem = this.#cofferProblem;
  }
}
