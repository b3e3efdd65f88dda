import { extname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { RenderAnswer } from './liquid-engine.ts';
import { type RenderReply, type RenderRequest, WORKER_READY } from './render-worker-protocol.ts';

/** The worker's heap: a template that allocates past it ends the worker, not the operator. */
const WORKER_HEAP_MB = 128;
/** How long a new worker may take to load the engine (not counted against a render: a busy machine loads slowly). */
const WORKER_START_TIMEOUT_MS = 30_000;

interface Current {
  request: RenderRequest;
  resolve: (answer: RenderAnswer) => void;
  /** Runs from when the worker got the render (or, while the worker starts, bounds the start). */
  timer: NodeJS.Timeout;
  sent: boolean;
}

/**
 * One worker thread and the render it runs (one at a time): a render that
 * runs past `timeoutMs` or exhausts the worker's heap stops the worker (the
 * next render gets a new one) and answers with a failure. The operator's own
 * thread and memory are untouched whatever a template does.
 */
export class RenderSlot {
  readonly #timeoutMs: number;
  #worker: Worker | undefined;
  /** Whether the worker has loaded the engine and takes renders. */
  #ready = false;
  #current: Current | undefined;

  constructor(timeoutMs: number) {
    this.#timeoutMs = timeoutMs;
  }

  get busy(): boolean {
    return this.#current !== undefined;
  }

  /** Runs one render; the slot must not be busy. */
  run(request: RenderRequest): Promise<RenderAnswer> {
    return new Promise((resolve) => {
      this.#workerThread();
      this.#current = { request, resolve, timer: setTimeout(() => this.#fail('renderer did not start'), WORKER_START_TIMEOUT_MS), sent: false };
      if (this.#ready) this.#send();
    });
  }

  async close(): Promise<void> {
    const worker = this.#worker;
    this.#worker = undefined;
    this.#fail('renderer was stopped (the operator is stopping)');
    await worker?.terminate();
  }

  #send(): void {
    const current = this.#current!;
    clearTimeout(current.timer);
    current.timer = setTimeout(() => this.#fail(`did not finish within ${this.#timeoutMs / 1000} s`), this.#timeoutMs);
    current.sent = true;
    this.#worker!.postMessage(current.request);
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
      if (this.#worker !== worker) return;
      if (reply !== WORKER_READY) return this.#answer(reply);
      this.#ready = true;
      if (this.#current && !this.#current.sent) this.#send();
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
    if (!current?.sent || current.request.id !== reply.id) return;
    clearTimeout(current.timer);
    this.#current = undefined;
    current.resolve(reply.answer);
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
    current.resolve({ ok: false, key: '', message: `the template ${what}` });
  }
}
