import { connect, type AddressInfo } from 'node:net';
import Fastify from 'fastify';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { type EventSource, streamEvents } from '../../src/http/sse.ts';

/**
 * The event-stream writer (src/http/sse.ts) over a real socket: a client that stops
 * reading is waited for without buffering more, then dropped; its source is closed.
 */

const app = Fastify();
const opened: { source: EventSource; closed: boolean; pulled: number }[] = [];
/** 64 KiB of data per event: the kernel's socket buffers fill after a few dozen. */
const PAYLOAD = 'x'.repeat(64 * 1024);

app.get('/stream', async (request, reply) => {
  const state = { closed: false, pulled: 0, source: undefined as unknown as EventSource };
  state.source = {
    next: async () => {
      if (state.closed) return null;
      state.pulled++;
      return [{ id: String(state.pulled), event: 'change', data: PAYLOAD }];
    },
    heartbeat: () => ({ event: 'ping', data: 'beat' }),
    close: () => {
      state.closed = true;
    },
  };
  opened.push(state);
  await streamEvents(request, reply, state.source, { heartbeatMs: 100, stallTimeoutMs: 1_000 });
});

let port: number;
beforeAll(async () => {
  await app.listen({ port: 0, host: '127.0.0.1' });
  port = (app.server.address() as AddressInfo).port;
});
afterAll(() => app.close());

async function waitUntil(what: string, check: () => boolean, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

test('a client that reads nothing is dropped after the stall timeout, having been sent no more than the socket took; its source is closed', async () => {
  const client = connect(port, '127.0.0.1');
  let ended = false;
  client.on('error', () => {});
  client.on('close', () => {
    ended = true;
  });
  client.write('GET /stream HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n');
  client.pause();
  await waitUntil('the stream to open', () => opened.length === 1);
  const state = opened[0]!;
  await waitUntil('the source to be closed', () => state.closed);
  // the writer stopped pulling once the socket was full: a few MiB of kernel buffers, not everything the source had
  expect(state.pulled).toBeLessThan(300);
  // reading again, the client finds the connection ended by the server
  client.resume();
  await waitUntil('the connection to be closed', () => ended);
});

test('a client that reads keeps its stream', async () => {
  const controller = new AbortController();
  const response = await fetch(`http://127.0.0.1:${port}/stream`, { signal: controller.signal });
  const reader = response.body!.getReader();
  let bytes = 0;
  const started = Date.now();
  while (Date.now() - started < 2_500) bytes += (await reader.read()).value?.length ?? 0;
  const state = opened.at(-1)!;
  expect(state.closed).toBe(false);
  expect(bytes).toBeGreaterThan(10 * PAYLOAD.length);
  controller.abort();
  await waitUntil('the source to be closed once the client goes', () => state.closed);
});
