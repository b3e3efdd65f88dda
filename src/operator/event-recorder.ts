import type { KubernetesObject } from '@kubernetes/client-node';

export type EventType = 'Normal' | 'Warning';

export interface PendingEvent {
  object: KubernetesObject;
  type: EventType;
  reason: string;
  message: string;
}

export interface EventRecorderOptions {
  /** Posts one Event (KubeApi.recordEvent). */
  send: (event: PendingEvent) => Promise<void>;
  /** Events waiting at most; beyond it new ones are dropped (client-go: 1,000). */
  capacity?: number;
  /** Events being posted at once. */
  concurrency?: number;
  /** An event left out: the queue was full, or posting it failed. */
  onDropped?: (type: EventType, cause: 'queue-full' | 'failed') => void;
}

/**
 * Kubernetes Events, best-effort and off the reconcile path, as client-go's
 * EventBroadcaster sends them: record() queues and returns at once; a few
 * posts run in the background; when `capacity` events are waiting, new
 * ones are dropped and counted. Warnings go first, and a Warning arriving at
 * a full queue takes the place of the oldest waiting Normal event. An event
 * identical to one still waiting (same object, type, reason and message) is
 * not queued twice, as client-go's correlator folds repeats.
 */
export class EventRecorder {
  readonly #send: EventRecorderOptions['send'];
  readonly #capacity: number;
  readonly #concurrency: number;
  readonly #onDropped: NonNullable<EventRecorderOptions['onDropped']>;
  readonly #warnings: PendingEvent[] = [];
  readonly #normals: PendingEvent[] = [];
  readonly #waiting = new Set<string>();
  readonly #idleWaiters: (() => void)[] = [];
  #posting = 0;

  constructor(options: EventRecorderOptions) {
    this.#send = options.send;
    this.#capacity = options.capacity ?? 1_000;
    this.#concurrency = options.concurrency ?? 2;
    this.#onDropped = options.onDropped ?? (() => {});
  }

  /** Queues an Event on `object`; never waits and never throws. Messages never carry secret values. */
  record(object: KubernetesObject, type: EventType, reason: string, message: string): void {
    const event = { object, type, reason, message };
    const key = identity(event);
    if (this.#waiting.has(key)) return;
    if (this.length >= this.#capacity && !this.#makeRoomFor(type)) {
      this.#onDropped(type, 'queue-full');
      return;
    }
    this.#waiting.add(key);
    (type === 'Warning' ? this.#warnings : this.#normals).push(event);
    this.#pump();
  }

  /** Events waiting to be posted. */
  get length(): number {
    return this.#warnings.length + this.#normals.length;
  }

  /** Resolves once nothing is waiting or being posted. */
  idle(): Promise<void> {
    if (this.length === 0 && this.#posting === 0) return Promise.resolve();
    return new Promise((resolve) => this.#idleWaiters.push(resolve));
  }

  /** A Warning may push out the oldest waiting Normal event; nothing else makes room. */
  #makeRoomFor(type: EventType): boolean {
    if (type !== 'Warning' || this.#normals.length === 0) return false;
    const dropped = this.#normals.shift()!;
    this.#waiting.delete(identity(dropped));
    this.#onDropped('Normal', 'queue-full');
    return true;
  }

  #pump(): void {
    while (this.#posting < this.#concurrency && this.length > 0) {
      const event = (this.#warnings.shift() ?? this.#normals.shift())!;
      this.#waiting.delete(identity(event));
      this.#posting++;
      void this.#post(event);
    }
    if (this.length === 0 && this.#posting === 0) this.#idleWaiters.splice(0).forEach((resolve) => resolve());
  }

  async #post(event: PendingEvent): Promise<void> {
    try {
      await this.#send(event);
    } catch {
      this.#onDropped(event.type, 'failed');
    } finally {
      this.#posting--;
      this.#pump();
    }
  }
}

function identity({ object, type, reason, message }: PendingEvent): string {
  return JSON.stringify([object.metadata?.uid ?? `${object.metadata?.namespace}/${object.metadata?.name}`, type, reason, message]);
}
