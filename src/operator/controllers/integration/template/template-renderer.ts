import type { RenderAnswer } from './liquid-engine.ts';
import type { RenderRequest } from './render-worker-protocol.ts';
import { RenderSlot } from './render-slot.ts';

/** How long one render may take before its worker is stopped (Liquid's own check comes first, at 1 s). */
export const RENDER_TIMEOUT_MS = 2_000;
/** Worker threads rendering at once (each with its own heap limit). */
export const RENDER_WORKERS = 2;

interface Pending {
  request: RenderRequest;
  resolve: (answer: RenderAnswer) => void;
}

/**
 * Renders templates on a small pool of worker threads, fairly across
 * namespaces: each namespace has its own queue and at most one render under
 * way, and a free worker takes the next render of the namespace that has
 * waited longest for its turn (round robin). So one namespace's templates,
 * however slow, hold at most one worker, and a render of another namespace
 * starts within ⌈(k + 1) / workers⌉ time limits (and a worker's start when
 * one was stopped), k being the number of namespaces whose turn comes first.
 */
export class TemplateRenderer {
  readonly #slots: RenderSlot[];
  /** Renders waiting, per namespace, in the order asked. */
  readonly #queues = new Map<string, Pending[]>();
  /** Namespaces with renders waiting and none under way, in the order of their turn. */
  readonly #turns: string[] = [];
  /** Namespaces with a render under way. */
  readonly #running = new Set<string>();
  #nextId = 1;
  #closed = false;

  constructor(options: { timeoutMs?: number; workers?: number } = {}) {
    const workers = Math.max(1, options.workers ?? RENDER_WORKERS);
    this.#slots = Array.from({ length: workers }, () => new RenderSlot(options.timeoutMs ?? RENDER_TIMEOUT_MS));
  }

  /** Renders `templates` over `secrets` for an Integration of `namespace`, in that namespace's turn. */
  render(namespace: string, templates: Record<string, string>, secrets: Record<string, string>): Promise<RenderAnswer> {
    if (this.#closed) return Promise.resolve(stopping());
    return new Promise((resolve) => {
      const queue = this.#queues.get(namespace) ?? [];
      queue.push({ request: { id: this.#nextId++, templates, secrets }, resolve });
      this.#queues.set(namespace, queue);
      if (queue.length === 1 && !this.#running.has(namespace)) this.#turns.push(namespace);
      this.#dispatch();
    });
  }

  /** Stops the workers (operator shutdown); renders still waiting answer with a failure. */
  async close(): Promise<void> {
    this.#closed = true;
    for (const queue of this.#queues.values()) for (const pending of queue) pending.resolve(stopping());
    this.#queues.clear();
    this.#turns.length = 0;
    await Promise.all(this.#slots.map((slot) => slot.close()));
  }

  #dispatch(): void {
    for (const slot of this.#slots) {
      if (slot.busy) continue;
      const namespace = this.#turns.shift();
      if (namespace === undefined) return;
      const queue = this.#queues.get(namespace)!;
      const pending = queue.shift()!;
      if (queue.length === 0) this.#queues.delete(namespace);
      this.#running.add(namespace);
      void slot.run(pending.request).then((answer) => {
        this.#running.delete(namespace);
        if (this.#queues.has(namespace)) this.#turns.push(namespace);
        pending.resolve(answer);
        this.#dispatch();
      });
    }
  }
}

function stopping(): RenderAnswer {
  return { ok: false, key: '', message: 'the template was not rendered: the operator is stopping' };
}
