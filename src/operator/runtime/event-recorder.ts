import type { KubernetesObject } from '@kubernetes/client-node';
import type { EventReason } from './condition-reason.ts';

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
  /** Posts per second in the long run, and how many may go at once after a quiet spell (a token bucket). */
  rate?: { perSecond: number; burst: number };
  /** An event left out: the queue was full, or posting it failed. */
  onDropped?: (type: EventType, cause: 'queue-full' | 'failed') => void;
}

/**
 * Kubernetes Events, best-effort and off the reconcile path, as client-go's
 * EventBroadcaster sends them: record() queues and returns at once; a few
 * posts run in the background, at a limited rate; when `capacity` events
 * are waiting, new ones are dropped and counted. Warnings go first, and a Warning arriving at
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
  readonly #rate: { perSecond: number; burst: number };
  #posting = 0;
  #tokens: number;
  #refilledAt = Date.now();
  #refillTimer: NodeJS.Timeout | undefined;

  constructor(options: EventRecorderOptions) {
    this.#send = options.send;
    this.#capacity = options.capacity ?? 1_000;
    this.#concurrency = options.concurrency ?? 2;
    this.#rate = options.rate ?? DEFAULT_RATE;
    this.#tokens = this.#rate.burst;
    this.#onDropped = options.onDropped ?? (() => {});
  }

  /** Queues an Event on `object`; never waits and never throws. Messages never carry secret values. */
  record(object: KubernetesObject, type: EventType, reason: EventReason, message: string): void {
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
    while (this.#posting < this.#concurrency && this.length > 0 && this.#takeToken()) {
      const event = (this.#warnings.shift() ?? this.#normals.shift())!;
      this.#waiting.delete(identity(event));
      this.#posting++;
      void this.#post(event);
    }
    if (this.length === 0 && this.#posting === 0) this.#idleWaiters.splice(0).forEach((resolve) => resolve());
  }

  /** Takes a token if there is one; otherwise pumps again when the next one is due. */
  #takeToken(): boolean {
    const now = Date.now();
    this.#tokens = Math.min(this.#rate.burst, this.#tokens + ((now - this.#refilledAt) / 1_000) * this.#rate.perSecond);
    this.#refilledAt = now;
    if (this.#tokens >= 1) {
      this.#tokens -= 1;
      return true;
    }
    if (!this.#refillTimer) {
      const dueInMs = Math.ceil(((1 - this.#tokens) / this.#rate.perSecond) * 1_000);
      this.#refillTimer = setTimeout(() => {
        this.#refillTimer = undefined;
        this.#pump();
      }, dueInMs);
      this.#refillTimer.unref();
    }
    return false;
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

/**
 * As client-go's event clients are commonly limited (kubelet: 50/s, burst 100): a burst of first syncs
 * does not double the apiserver's writes; the queue takes the rest, and drops what does not fit.
 */
const DEFAULT_RATE = { perSecond: 25, burst: 100 };

/** What makes two waiting Events the same (the object, by uid where it has one), as the queue's dedupe key: fields joined by NUL, which none of them holds. */
function identity({ object, type, reason, message }: PendingEvent): string {
  const { uid, namespace, name } = object.metadata ?? {};
  const about = uid ?? `${namespace}/${name}`;
  return [about, type, reason, message].join('\u0000');
}
