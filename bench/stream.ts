/**
 * The change stream under fan-out: N concurrent subscribers of `GET /api/v1/changes/stream` (each a machine
 * identity of its own, viewer in the project, as N clusters' operators would be) on one `coffer serve`
 * (built, a separate process, PostgreSQL); a writer changes secrets one at a time and every subscriber
 * timestamps the event. Prints change-to-delivery p50/p99 (from sending the write to each subscriber's
 * receipt of the event) and the server's RSS idle, with the subscribers connected, and at the end.
 *
 *   npm run bench:stream -- --subscribers 100 --changes 200 --interval 50
 */
import { parseArgs } from 'node:util';
import { createParser } from 'eventsource-parser';
import {
  appendResults,
  bootstrapWithMember,
  call,
  freshDatabase,
  loadAverage,
  log,
  machine,
  ms,
  percentile,
  postgresVersion,
  rssMiB,
  serverKeys,
  startServer,
  table,
} from './common.ts';

const { values: args } = parseArgs({
  options: {
    subscribers: { type: 'string', default: '100' },
    changes: { type: 'string', default: '200' },
    interval: { type: 'string', default: '50' },
  },
});
const SUBSCRIBERS = Number(args.subscribers);
const CHANGES = Number(args.changes);
const INTERVAL_MS = Number(args.interval);

interface Subscriber {
  /** Receipt times (performance.now()) of the change events, in revision order. */
  received: number[];
  close(): void;
}

/** One stream with its own connection; resolves once its `ready` event arrived. */
async function subscribe(url: string, token: string): Promise<Subscriber> {
  const controller = new AbortController();
  const response = await fetch(url, { headers: { authorization: `Bearer ${token}` }, signal: controller.signal });
  if (response.status !== 200) throw new Error(`stream answered ${response.status}: ${await response.text()}`);
  const received: number[] = [];
  let ready!: () => void;
  const isReady = new Promise<void>((resolve) => (ready = resolve));
  const parser = createParser({
    onEvent(event) {
      if (event.event === 'ready') ready();
      if (event.event === 'change') received.push(performance.now());
    },
  });
  void (async () => {
    const decoder = new TextDecoder();
    try {
      for await (const chunk of response.body!) parser.feed(decoder.decode(chunk, { stream: true }));
    } catch {
      // closed
    }
  })();
  await isReady;
  return { received, close: () => controller.abort() };
}

async function main() {
  const database = await freshDatabase('stream');
  const storage = `${await postgresVersion()} (local, fresh database)`;
  const server = await startServer({ ...serverKeys(), COFFER_OPERATOR: 'false', COFFER_LOG_LEVEL: 'warn', DATABASE_URL: database.url });
  const subscribers: Subscriber[] = [];
  const rss: Record<string, number> = {};
  /** Send times of the writes; each makes one change, in this order (nothing else writes meanwhile). */
  const sent: number[] = [];
  try {
    const { adminToken, orgId, projectId, memberToken } = await bootstrapWithMember(server, 'Bench stream');
    log(`creating ${SUBSCRIBERS} machine identities`);
    const tokens: string[] = [];
    for (let index = 0; index < SUBSCRIBERS; index++) {
      const { identity } = await call(server, 'POST', '/api/v1/identities', adminToken, { name: `cluster-${index}`, organizationId: orgId, role: 'member' });
      await call(server, 'POST', `/api/v2/workspace/${projectId}/identity-memberships/${identity.id}`, adminToken, { roles: [{ role: 'viewer' }] });
      const { identityUniversalAuth } = await call(server, 'POST', `/api/v1/auth/universal-auth/identities/${identity.id}`, adminToken, {});
      const { clientSecret } = await call(server, 'POST', `/api/v1/auth/universal-auth/identities/${identity.id}/client-secrets`, adminToken, {});
      const login = await call(server, 'POST', '/api/v1/auth/universal-auth/login', undefined, { clientId: identityUniversalAuth.clientId, clientSecret });
      tokens.push(login.accessToken);
    }
    const write = (index: number) =>
      call(server, 'PATCH', '/api/v3/secrets/raw/STREAMED', memberToken, { workspaceId: projectId, environment: 'dev', secretValue: `value-${index}` });
    await call(server, 'POST', '/api/v3/secrets/raw/STREAMED', memberToken, { workspaceId: projectId, environment: 'dev', secretValue: 'first' });
    rss.idle = rssMiB(server.process.pid!);
    const url = `${server.api}/api/v1/changes/stream`;
    log(`opening ${SUBSCRIBERS} streams`);
    for (const token of tokens) subscribers.push(await subscribe(url, token));
    // warm-up: every stream reads its caller's permissions on its first change
    for (let index = 0; index < 5; index++) await write(-index - 1);
    await waitFor(() => subscribers.every((subscriber) => subscriber.received.length >= 5));
    for (const subscriber of subscribers) subscriber.received.length = 0;
    rss.connected = rssMiB(server.process.pid!);
    log(`${CHANGES} changes, one every ${INTERVAL_MS} ms`);
    for (let index = 0; index < CHANGES; index++) {
      sent.push(performance.now());
      await write(index);
      await new Promise((resolve) => setTimeout(resolve, INTERVAL_MS));
    }
    await waitFor(() => subscribers.every((subscriber) => subscriber.received.length >= CHANGES), 60_000);
    rss.end = rssMiB(server.process.pid!);
  } finally {
    for (const subscriber of subscribers) subscriber.close();
    await server.stop();
    await database.drop();
  }
  const latencies: number[] = [];
  let missing = 0;
  for (const subscriber of subscribers) {
    sent.forEach((start, index) => {
      const at = subscriber.received[index];
      if (at === undefined) missing++;
      else latencies.push(at - start);
    });
  }
  latencies.sort((a, b) => a - b);
  appendResults(`Change stream: ${SUBSCRIBERS} subscribers on one server (PostgreSQL)`, [
    `Machine: ${machine(storage)}; load ${loadAverage()}.`,
    `${SUBSCRIBERS} streams (one machine identity each, viewer), ${CHANGES} secret updates one every ${INTERVAL_MS} ms; latency from sending the PATCH to each subscriber's receipt of the event (the PATCH's own round trip included).`,
    '',
    ...table(
      ['deliveries', 'missing', 'p50 ms', 'p90 ms', 'p99 ms', 'max ms', 'RSS idle MiB', 'RSS with streams MiB', 'RSS at end MiB'],
      [
        [
          latencies.length,
          missing,
          ms(percentile(latencies, 50)),
          ms(percentile(latencies, 90)),
          ms(percentile(latencies, 99)),
          ms(latencies.at(-1) ?? NaN),
          rss.idle.toFixed(0),
          rss.connected.toFixed(0),
          rss.end.toFixed(0),
        ],
      ],
    ),
  ]);
}

async function waitFor(check: () => boolean, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('timed out waiting for the subscribers');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
