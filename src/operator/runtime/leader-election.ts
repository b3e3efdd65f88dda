import type { V1Lease } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { apiStatus, describeError, isKubeNotFound, type KubeApi } from './kube-api.ts';
import { ANNOTATION_INSTALLATION } from '../resources.ts';

/** Lease times are MicroTime: the apiserver wants six fractional digits, Date gives three. */
class MicroTime extends Date {
  override toISOString(): string {
    return super.toISOString().replace(/Z$/, '000Z');
  }
}

export interface LeaderElectionOptions {
  namespace: string;
  name: string;
  identity: string;
  /** This replica's installation: a Lease of another installation is never taken, even expired. */
  installationId: string;
  /** Called once per other installation found holding the Lease. */
  onForeignLease?: (lease: V1Lease, otherInstallation: string) => void;
  leaseDurationSeconds?: number;
  /** How often the leader renews the Lease. */
  renewIntervalMs?: number;
  /** How often a replica that does not lead tries to take it (client-go's retry period). */
  retryPeriodMs?: number;
  onStartedLeading: () => Promise<void>;
  onStoppedLeading: () => Promise<void>;
}

/**
 * Leader election on a coordination.k8s.io Lease: the holder renews it; a
 * replica takes it over once it has not been renewed for a lease duration.
 * Updates carry the resourceVersion, so two replicas never both win. The
 * Lease names its installation (annotation coffer.dev/installation, and the
 * holder identity begins with it): a replica of another installation never
 * takes it over, expired or not, and says so; deleting the Lease hands the
 * cluster over. A replica that finds its own identity holding the Lease (the
 * same pod, restarted) resumes at once; one that stops releases it, so the
 * next takes over at once; one killed is replaced once the Lease expires.
 */
export class LeaderElector {
  readonly #kube: KubeApi;
  readonly #logger: Logger;
  readonly #options: Required<Omit<LeaderElectionOptions, 'onForeignLease'>> & Pick<LeaderElectionOptions, 'onForeignLease'>;
  readonly #reportedForeign = new Set<string>();
  #leading = false;
  #timer: NodeJS.Timeout | null = null;
  #stopped = false;
  #transition: Promise<void> = Promise.resolve();
  #lastRenewed = 0;
  #failedRounds = 0;

  constructor(kube: KubeApi, logger: Logger, options: LeaderElectionOptions) {
    this.#kube = kube;
    this.#logger = logger;
    this.#options = { leaseDurationSeconds: 15, renewIntervalMs: 5_000, retryPeriodMs: 2_000, ...options };
  }

  get isLeader(): boolean {
    return this.#leading;
  }

  start(): void {
    const tick = async () => {
      if (this.#stopped) return;
      await this.#tryAcquireOrRenew().then(
        () => {
          if (this.#failedRounds > 0) this.#logger.info({ failedRounds: this.#failedRounds }, 'leader election works again');
          this.#failedRounds = 0;
        },
        async (error: unknown) => {
          this.#failedRounds++;
          const fields = { error: describeError(error), failedRounds: this.#failedRounds };
          if (this.#failedRounds === 1) this.#logger.warn(fields, 'leader election round failed; retrying');
          else this.#logger.debug(fields, 'leader election round failed again');
          // A leader that cannot renew must assume another replica took over once the lease ran out.
          if (this.#leading && Date.now() - this.#lastRenewed > this.#options.leaseDurationSeconds * 1000) await this.#setLeading(false);
        },
      );
      if (!this.#stopped) this.#timer = setTimeout(() => void tick(), this.#leading ? this.#options.renewIntervalMs : this.#options.retryPeriodMs);
    };
    void tick();
  }

  /** Stops campaigning; a leader steps down and releases the Lease so another replica takes over at once. */
  async stop(): Promise<void> {
    this.#stopped = true;
    if (this.#timer) clearTimeout(this.#timer);
    await this.#transition;
    if (this.#leading) {
      await this.#setLeading(false);
      await this.#release().catch((error: unknown) =>
        this.#logger.warn({ error: describeError(error) }, 'could not release the Lease on stopping; another replica takes over once it expires'),
      );
    }
  }

  async #tryAcquireOrRenew(): Promise<void> {
    const { namespace, name, identity, leaseDurationSeconds, installationId } = this.#options;
    const now = new MicroTime();
    let lease: V1Lease | undefined;
    try {
      lease = await this.#kube.coordination.readNamespacedLease({ namespace, name });
    } catch (error) {
      if (!isKubeNotFound(error)) throw error;
    }
    if (!lease) {
      await this.#guard(() =>
        this.#kube.coordination.createNamespacedLease({
          namespace,
          body: {
            metadata: { name, namespace, annotations: { [ANNOTATION_INSTALLATION]: installationId } },
            spec: { holderIdentity: identity, leaseDurationSeconds, acquireTime: now, renewTime: now, leaseTransitions: 0 },
          },
        }),
      );
      return;
    }
    const owner = lease.metadata?.annotations?.[ANNOTATION_INSTALLATION];
    if (owner && owner !== installationId) {
      if (!this.#reportedForeign.has(owner)) {
        this.#reportedForeign.add(owner);
        this.#options.onForeignLease?.(lease, owner);
      }
      return this.#setLeading(false);
    }
    const spec = lease.spec ?? {};
    const held = spec.holderIdentity === identity;
    const renewedAt = spec.renewTime ? new Date(spec.renewTime).getTime() : 0;
    const expired = !spec.holderIdentity || renewedAt + (spec.leaseDurationSeconds ?? leaseDurationSeconds) * 1000 < now.getTime();
    if (!held && !expired) return this.#setLeading(false);
    lease.metadata = { ...lease.metadata, annotations: { ...lease.metadata?.annotations, [ANNOTATION_INSTALLATION]: installationId } };
    lease.spec = {
      ...spec,
      holderIdentity: identity,
      leaseDurationSeconds,
      renewTime: now,
      ...(held ? {} : { acquireTime: now, leaseTransitions: (spec.leaseTransitions ?? 0) + 1 }),
    };
    await this.#guard(() => this.#kube.coordination.replaceNamespacedLease({ namespace, name, body: lease }));
  }

  /** A write that loses the race (409) means another replica leads. */
  async #guard(write: () => Promise<unknown>): Promise<void> {
    try {
      await write();
      this.#lastRenewed = Date.now();
      await this.#setLeading(true);
    } catch (error) {
      if (apiStatus(error) !== 409) throw error;
      await this.#setLeading(false);
    }
  }

  #setLeading(leading: boolean): Promise<void> {
    if (leading === this.#leading) return this.#transition;
    this.#leading = leading;
    this.#logger.info({ identity: this.#options.identity, leading }, leading ? 'became the leader' : 'stopped leading');
    this.#transition = this.#transition.then(() => (leading ? this.#options.onStartedLeading() : this.#options.onStoppedLeading()));
    return this.#transition;
  }

  async #release(): Promise<void> {
    const { namespace, name } = this.#options;
    const lease = await this.#kube.coordination.readNamespacedLease({ namespace, name });
    if (lease.spec?.holderIdentity !== this.#options.identity) return;
    lease.spec.holderIdentity = undefined;
    lease.spec.renewTime = undefined;
    await this.#kube.coordination.replaceNamespacedLease({ namespace, name, body: lease });
  }
}
