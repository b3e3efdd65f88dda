import { extname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { RenderAnswer } from './liquid-engine.ts';
import { type RenderReply, type RenderRequest, WORKER_READY } from './render-worker-protocol.ts';

/** How long one render may take before its worker is stopped (Liquid's own check comes first, at 1 s). */
const RENDER_TIMEOUT_MS = 2_000;
/** The worker's heap: a template that allocates past it ends the worker, not the operator. */
const WORKER_HEAP_MB = 128;
/** How long a new worker may take to load the engine (not counted against a render: a busy machine loads slowly). */
const WORKER_START_TIMEOUT_MS = 30_000;

interface Pending {
  request: RenderRequest;
  resolve: (answer: RenderAnswer) => void;
}

/**
 * Renders templates in a worker thread, one render at a time: a render that
 * runs past RENDER_TIMEOUT_MS or exhausts the worker's heap stops the worker
 * (a new one serves the next render) and answers with a failure. Namespace
 * users write these templates; whatever they do, the operator's own thread
 * and memory are untouched.
 */
export class TemplateRenderer {
  readonly #timeoutMs: number;
  readonly #queue: Pending[] = [];
  #worker: Worker | undefined;
  /** Whether the worker has loaded the engine and takes renders. */
  #ready = false;
  /** The render under way; its timer runs from when the worker got it (or, while the worker starts, bounds the start). */
  #current: { pending: Pending; timer: NodeJS.Timeout; sent: boolean } | undefined;
  #nextId = 1;

  constructor(options: { timeoutMs?: number } = {}) {
    this.#timeoutMs = options.timeoutMs ?? RENDER_TIMEOUT_MS;
  }

  render(templates: Record<string, string>, secrets: Record<string, string>): Promise<RenderAnswer> {
    return new Promise((resolve) => {
      this.#queue.push({ request: { id: this.#nextId++, templates, secrets }, resolve });
      this.#startNext();
    });
  }

  /** Stops the worker (operator shutdown); renders still queued answer with a failure. */
  async close(): Promise<void> {
    for (const pending of this.#queue.splice(0)) pending.resolve(failure(pending.request, 'the operator is stopping'));
    const worker = this.#worker;
    this.#worker = undefined;
    await worker?.terminate();
  }

  #startNext(): void {
    if (this.#current) return;
    const pending = this.#queue.shift();
    if (!pending) return;
    this.#workerThread();
    if (this.#ready) return this.#send(pending);
    this.#current = { pending, timer: setTimeout(() => this.#fail('renderer did not start'), WORKER_START_TIMEOUT_MS), sent: false };
  }

  #send(pending: Pending): void {
    if (this.#current) clearTimeout(this.#current.timer);
    const timer = setTimeout(() => this.#fail(`did not finish within ${this.#timeoutMs / 1000} s`), this.#timeoutMs);
    this.#current = { pending, timer, sent: true };
    this.#worker!.postMessage(pending.request);
  }

  #workerThread(): Worker {
    if (this.#worker) return this.#worker;
    const worker = new Worker(new URL(`./render-worker${extname(fileURLToPath(import.meta.url))}`, import.meta.url), {
      resourceLimits: { maxOldGenerationSizeMb: WORKER_HEAP_MB, maxYoungGenerationSizeMb: 16 },
      stdout: true,
      stderr: true,
    });
    worker.unref();
    this.#ready = false;
    worker.on('message', (reply: RenderReply | typeof WORKER_READY) => {
      if (reply !== WORKER_READY) return this.#answer(reply);
      if (this.#worker !== worker) return;
      this.#ready = true;
      if (this.#current && !this.#current.sent) this.#send(this.#current.pending);
    });
    worker.on('error', (error: Error & { code?: string }) => {
      if (this.#worker === worker) this.#fail(error.code === 'ERR_WORKER_OUT_OF_MEMORY' ? 'used too much memory' : 'ended the renderer');
    });
    worker.on('exit', () => {
      if (this.#worker === worker) this.#fail('ended the renderer');
    });
    this.#worker = worker;
    return worker;
  }

  #answer(reply: RenderReply): void {
    const current = this.#current;
    if (!current?.sent || current.pending.request.id !== reply.id) return;
    clearTimeout(current.timer);
    this.#current = undefined;
    current.pending.resolve(reply.answer);
    this.#startNext();
  }

  /** The current render failed with its worker: the worker goes, the next render gets a new one. */
  #fail(what: string): void {
    const current = this.#current;
    const worker = this.#worker;
    this.#worker = undefined;
    void worker?.terminate();
    if (!current) return;
    clearTimeout(current.timer);
    this.#current = undefined;
    current.pending.resolve(failure(current.pending.request, `the template ${what}`));
    this.#startNext();
  }
}

/** A failure of the whole render (no one key to blame). */
function failure(_request: RenderRequest, message: string): RenderAnswer {
  return { ok: false, key: '', message };
}
