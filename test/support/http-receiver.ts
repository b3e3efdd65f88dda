import { createServer, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { freePort } from './free-port.ts';

export interface Received {
  headers: IncomingHttpHeaders;
  body: string;
}

/**
 * A receiver of outbound deliveries (webhooks, audit log streams) on 127.0.0.1: answers `status` (204 by default),
 * holds every request unanswered (`silent`), or answers 200 and then sends its body a byte every half second without
 * ever ending it (`trickle`); `holdUntil` delays the answers until a promise settles. Can be stopped and started
 * again on its port.
 */
export class Receiver {
  readonly received: Received[] = [];
  /** What the next requests get; a test may change it (e.g. hold requests unanswered from some point on). */
  answer: number | 'silent' | 'trickle';
  /** Answers wait for what this answers, asked as each request arrives (e.g. until another receiver got its delivery). */
  holdUntil: (() => Promise<unknown>) | null = null;
  /** Called with each request as it arrives, before it is answered (the answer waits for it). */
  onRequest: ((received: Received) => Promise<void>) | null = null;
  #server: Server | null = null;
  port = 0;

  constructor(answer: number | 'silent' | 'trickle' = 204) {
    this.answer = answer;
  }

  get url() {
    return `http://127.0.0.1:${this.port}/hook`;
  }

  async start(): Promise<void> {
    this.port ||= await freePort();
    const server = createServer((request: IncomingMessage, response: ServerResponse) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        const received = { headers: request.headers, body: Buffer.concat(chunks).toString('utf8') };
        this.received.push(received);
        const answer = this.answer;
        const respond = () => this.#respond(answer, response);
        void Promise.allSettled([this.holdUntil?.(), this.onRequest?.(received)]).then(respond);
      });
    });
    await new Promise<void>((resolve) => server.listen(this.port, '127.0.0.1', resolve));
    this.#server = server;
  }

  #respond(answer: Receiver['answer'], response: ServerResponse) {
    if (answer === 'silent') return;
    if (answer !== 'trickle') return void response.writeHead(answer).end(answer >= 400 ? 'receiver says: secret internal detail' : undefined);
    response.writeHead(200, { 'content-type': 'text/plain' });
    response.write('r');
    const drip = setInterval(() => response.write('r'), 500);
    response.on('close', () => clearInterval(drip));
  }

  /** Resolves once `count` requests arrived; fails after `timeoutMs`. */
  async waitFor(count: number, timeoutMs = 30_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (this.received.length < count) {
      if (Date.now() > deadline) throw new Error(`${this.received.length} of ${count} requests arrived within ${timeoutMs} ms`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  async stop(): Promise<void> {
    const server = this.#server;
    this.#server = null;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

/** Receivers started by a describe block: `start()` one more; `stopAll()` (its afterAll) stops every one. */
export function receiverSet() {
  const started: Receiver[] = [];
  return {
    async start(answer: Receiver['answer'] = 204): Promise<Receiver> {
      const receiver = new Receiver(answer);
      await receiver.start();
      started.push(receiver);
      return receiver;
    },
    stopAll: () => Promise.all(started.map((receiver) => receiver.stop())),
  };
}
