import { Counter, Gauge, type Registry } from 'prom-client';

/** What the operator did: reconciles by kind and outcome, its own Kubernetes API calls, its queue. */
export class OperatorMetrics {
  readonly #reconciles: Counter<'kind' | 'outcome'>;
  readonly #kubeRequests: Counter<'verb' | 'resource'>;
  readonly #eventsDropped: Counter<'type' | 'cause'>;
  #queueLength: () => number = () => 0;

  constructor(registry: Registry) {
    this.#reconciles = new Counter({
      name: 'coffer_operator_reconciles_total',
      help: 'Reconciles by kind and outcome (ok, requeue, error)',
      labelNames: ['kind', 'outcome'],
      registers: [registry],
    });
    this.#kubeRequests = new Counter({
      name: 'coffer_operator_kube_requests_total',
      help: 'Kubernetes API calls the reconcilers made (informer list/watch not included)',
      labelNames: ['verb', 'resource'],
      registers: [registry],
    });
    this.#eventsDropped = new Counter({
      name: 'coffer_operator_events_dropped_total',
      help: 'Kubernetes Events left out by type and cause (queue-full: more were waiting than the queue holds; failed: the apiserver refused or was unreachable)',
      labelNames: ['type', 'cause'],
      registers: [registry],
    });
    const queueLength = () => this.#queueLength();
    new Gauge({
      name: 'coffer_operator_queue_length',
      help: 'Keys waiting in or being processed by the work queue',
      registers: [registry],
      collect() {
        this.set(queueLength());
      },
    });
  }

  reconciled(kind: string, outcome: 'ok' | 'requeue' | 'error'): void {
    this.#reconciles.inc({ kind, outcome });
  }

  kubeRequest(verb: string, resource: string): void {
    this.#kubeRequests.inc({ verb, resource });
  }

  eventDropped(type: string, cause: string): void {
    this.#eventsDropped.inc({ type, cause });
  }

  observeQueue(length: () => number): void {
    this.#queueLength = length;
  }
}
