import { createServer, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { freePort } from './free-port.ts';

export interface Received {
  headers: IncomingHttpHeaders;
  body: string;
}

/**
 * A receiver of outbound deliveries (webhooks, audit log streams) on 127.0.0.1: answers `status` (204 by default), or
 * holds every request unanswered (`silent`); can be stopped and started again on its port.
 */
export class Receiver {
  readonly received: Received[] = [];
  /** What the next requests get; a test may change it (e.g. hold requests unanswered from some point on). */
  answer: number | 'silent';
  #server: Server | null = null;
  port = 0;

  constructor(answer: number | 'silent' = 204) {
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
        this.received.push({ headers: request.headers, body: Buffer.concat(chunks).toString('utf8') });
        const answer = this.answer;
        if (answer !== 'silent') response.writeHead(answer).end(answer >= 400 ? 'receiver says: secret internal detail' : undefined);
      });
    });
    await new Promise<void>((resolve) => server.listen(this.port, '127.0.0.1', resolve));
    this.#server = server;
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
