import { Counter, Gauge, Histogram, type MetricValue, type Registry } from 'prom-client';
import type { KindName } from '../resources.ts';
import type { ConditionType } from './condition-type.ts';
import { queueId } from './object-key.ts';

export type ReconcileOutcome = 'ok' | 'requeue' | 'error';

/** Which resource a per-resource series is about. */
export interface ResourceLabels {
  kind: KindName;
  namespace: string;
  name: string;
}

/**
 * The labels of a per-resource series: resource_namespace and resource_name,
 * since Prometheus gives every scraped series the `namespace` (and `pod`) of
 * the target it came from.
 */
function resourceLabels({ kind, namespace, name }: ResourceLabels) {
  return { kind, resource_namespace: namespace, resource_name: name };
}

const CONDITION_STATUSES = ['True', 'False', 'Unknown'] as const;

type ConditionLabel = 'kind' | 'resource_namespace' | 'resource_name' | 'condition' | 'status';

/**
 * coffer_operator_resource_condition: each resource's condition statuses are kept once and turned into the
 * 0/1 series only when scraped. Kept as prom-client series they were three labelled entries per condition, 63,000
 * at 10,000 Integrations (11 MB of the operator's heap).
 */
class ResourceConditions extends Gauge<ConditionLabel> {
  readonly #resources = new Map<string, { labels: ReturnType<typeof resourceLabels>; statuses: Map<ConditionType, string> }>();

  constructor(registers: Registry[]) {
    super({
      name: 'coffer_operator_resource_condition',
      help: 'Each resource’s conditions: 1 for the status the condition has, 0 for the others',
      labelNames: ['kind', 'resource_namespace', 'resource_name', 'condition', 'status'],
      registers,
    });
  }

  note(resource: ResourceLabels, condition: ConditionType, status: string): void {
    const id = queueId(resource);
    let entry = this.#resources.get(id);
    if (!entry) this.#resources.set(id, (entry = { labels: resourceLabels(resource), statuses: new Map() }));
    entry.statuses.set(condition, status);
  }

  forget(resource: ResourceLabels): void {
    this.#resources.delete(queueId(resource));
  }

  /** The series of every resource noted (none are kept as prom-client's own: it holds no labelled values). */
  override async get(): ReturnType<Gauge<ConditionLabel>['get']> {
    const values: MetricValue<ConditionLabel>[] = [];
    for (const { labels, statuses } of this.#resources.values()) {
      for (const [condition, status] of statuses) {
        for (const value of CONDITION_STATUSES) values.push({ labels: { ...labels, condition, status: value }, value: value === status ? 1 : 0 });
      }
    }
    return { ...(await super.get()), values };
  }
}

/**
 * What the operator did and how it stands, for dashboards and alerts
 * (deploy/monitoring/): reconciles by outcome, errors by reason, how long
 * reconciles and change-to-Secret take, each resource's conditions, the work
 * queue's depth and age, leadership and readiness, its Kubernetes calls.
 */
export class OperatorMetrics {
  readonly #reconciles: Counter<'kind' | 'outcome'>;
  readonly #errors: Counter<'kind' | 'reason'>;
  readonly #reconcileSeconds: Histogram<'kind'>;
  readonly #changeToSecretSeconds: Histogram;
  readonly #conditions: ResourceConditions;
  readonly #kubeRequests: Counter<'verb' | 'resource'>;
  readonly #eventsDropped: Counter<'type' | 'cause'>;
  readonly #watchFailures: Counter<'resource'>;
  readonly #rollouts: Counter<'kind'>;
  readonly #leader: Gauge;
  readonly #ready: Gauge;
  #queue: { length: () => number; oldestWaitMs: () => number } = { length: () => 0, oldestWaitMs: () => 0 };

  constructor(registry: Registry) {
    const registers = [registry];
    this.#reconciles = new Counter({
      name: 'coffer_operator_reconciles_total',
      help: 'Reconciles by kind and outcome (ok, requeue, error)',
      labelNames: ['kind', 'outcome'],
      registers,
    });
    this.#errors = new Counter({
      name: 'coffer_operator_reconcile_errors_total',
      help: 'Failed reconciles by kind and reason (the condition reason, e.g. SecretTooLarge, GrantRevoked; Error for an unexpected one)',
      labelNames: ['kind', 'reason'],
      registers,
    });
    this.#reconcileSeconds = new Histogram({
      name: 'coffer_operator_reconcile_duration_seconds',
      help: 'Time one reconcile took, by kind',
      labelNames: ['kind'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers,
    });
    this.#changeToSecretSeconds = new Histogram({
      name: 'coffer_operator_change_to_secret_seconds',
      help: 'From the commit of a change in Coffer to the Secret holding it (the earliest change a write carried)',
      buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
      registers,
    });
    this.#conditions = new ResourceConditions(registers);
    this.#kubeRequests = new Counter({
      name: 'coffer_operator_kube_requests_total',
      help: 'Kubernetes API calls the reconcilers made (informer list/watch not included)',
      labelNames: ['verb', 'resource'],
      registers,
    });
    this.#eventsDropped = new Counter({
      name: 'coffer_operator_events_dropped_total',
      help: 'Kubernetes Events left out by type and cause (queue-full: more were waiting than the queue holds; failed: the apiserver refused or was unreachable)',
      labelNames: ['type', 'cause'],
      registers,
    });
    this.#watchFailures = new Counter({
      name: 'coffer_operator_watch_failures_total',
      help: 'Informer list/watch failures by resource (each is retried)',
      labelNames: ['resource'],
      registers,
    });
    this.#rollouts = new Counter({
      name: 'coffer_operator_rollouts_total',
      help: 'Workloads rolled because a key they consume changed, by kind (Deployment, StatefulSet, DaemonSet)',
      labelNames: ['kind'],
      registers,
    });
    this.#leader = new Gauge({ name: 'coffer_operator_leader', help: '1 while this replica leads (reconciles), else 0', registers });
    this.#ready = new Gauge({ name: 'coffer_operator_ready', help: '1 while the operator can work (its permissions granted, its watches running), else 0', registers });
    const queue = () => this.#queue;
    new Gauge({
      name: 'coffer_operator_queue_length',
      help: 'Keys waiting in or being processed by the work queue',
      registers,
      collect() {
        this.set(queue().length());
      },
    });
    new Gauge({
      name: 'coffer_operator_queue_oldest_seconds',
      help: 'How long the oldest key waiting in the work queue has waited',
      registers,
      collect() {
        this.set(queue().oldestWaitMs() / 1000);
      },
    });
  }

  reconciled(kind: KindName, outcome: ReconcileOutcome, seconds?: number): void {
    this.#reconciles.inc({ kind, outcome });
    if (seconds !== undefined) this.#reconcileSeconds.observe({ kind }, seconds);
  }

  failed(kind: KindName, reason: string): void {
    this.#errors.inc({ kind, reason });
  }

  changeReachedSecret(seconds: number): void {
    this.#changeToSecretSeconds.observe(Math.max(0, seconds));
  }

  condition(resource: ResourceLabels, condition: ConditionType, status: string): void {
    this.#conditions.note(resource, condition, status);
  }

  /** The resource is gone: its series go too. */
  forgetResource(resource: ResourceLabels): void {
    this.#conditions.forget(resource);
  }

  kubeRequest(verb: string, resource: string): void {
    this.#kubeRequests.inc({ verb, resource });
  }

  eventDropped(type: string, cause: string): void {
    this.#eventsDropped.inc({ type, cause });
  }

  watchFailed(resource: string): void {
    this.#watchFailures.inc({ resource });
  }

  rolledOut(kind: string): void {
    this.#rollouts.inc({ kind });
  }

  leading(leading: boolean): void {
    this.#leader.set(leading ? 1 : 0);
  }

  ready(ready: boolean): void {
    this.#ready.set(ready ? 1 : 0);
  }

  observeQueue(queue: { length: () => number; oldestWaitMs: () => number }): void {
    this.#queue = queue;
  }
}
