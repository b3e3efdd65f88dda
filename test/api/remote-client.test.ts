import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer, type Server } from 'node:tls';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { AppError } from '../../src/errors.ts';
import { ChangeFollower, type StreamedChange } from '../../src/remote/change-follower.ts';
import { ServerConnection, ServerUnavailableError, UnexpectedAnswerError } from '../../src/remote/server-connection.ts';
import { installationAnswer } from '../../src/wire/operator-wire.ts';
import { TokenKeeper } from '../../src/remote/token-keeper.ts';
import { type AccessFixture, accessFixture } from '../support/access-fixture.ts';
import { waitUntil } from '../support/event-stream.ts';
import { startTestApp, type TestApp } from '../support/test-app.ts';

/**
 * The pieces an operator in another cluster talks to its Coffer server with (src/remote/),
 * against a real server over real sockets: TLS with a private CA, universal auth with
 * renewal and re-login, and the change stream followed across disconnects.
 */

const run = promisify(execFile);
const app: TestApp = await startTestApp();
const USER_AGENT = 'k8-operator/0.1.0 (cluster cluster-b)';
let fx: AccessFixture;
let base: string;
let certs: string;
let tlsProxy: Server;

/** A CA and a serving certificate for the name coffer.internal only (not 127.0.0.1). */
async function makeCerts(dir: string): Promise<void> {
  const sh = (...args: string[]) => run('openssl', args, { cwd: dir });
  const ec = ['genpkey', '-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-256'];
  await sh(...ec, '-out', 'ca.key');
  await sh(
    'req',
    '-x509',
    '-new',
    '-key',
    'ca.key',
    '-subj',
    '/CN=remote-test-ca',
    '-days',
    '2',
    '-out',
    'ca.crt',
    '-addext',
    'basicConstraints=critical,CA:TRUE',
    '-addext',
    'keyUsage=critical,keyCertSign,cRLSign',
  );
  await sh(...ec, '-out', 'server.key');
  await sh('req', '-new', '-key', 'server.key', '-subj', '/CN=coffer.internal', '-out', 'server.csr');
  writeFileSync(join(dir, 'server.ext'), 'basicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\nsubjectAltName=DNS:coffer.internal\n');
  await sh('x509', '-req', '-in', 'server.csr', '-CA', 'ca.crt', '-CAkey', 'ca.key', '-CAcreateserial', '-days', '2', '-extfile', 'server.ext', '-out', 'server.crt');
}

beforeAll(async () => {
  fx = await accessFixture(app, 'remote-client');
  await app.app.listen({ port: 0, host: '127.0.0.1' });
  const port = (app.app.server.address() as AddressInfo).port;
  base = `http://127.0.0.1:${port}`;
  certs = mkdtempSync(join(tmpdir(), 'coffer-remote-tls-'));
  await makeCerts(certs);
  // TLS in front of the API, as an ingress would terminate it
  tlsProxy = createServer({ key: readFileSync(join(certs, 'server.key')), cert: readFileSync(join(certs, 'server.crt')) }, (socket) => {
    const upstream = connect(port, '127.0.0.1');
    socket.pipe(upstream).pipe(socket);
    socket.on('error', () => upstream.destroy());
    upstream.on('error', () => socket.destroy());
  });
  await new Promise<void>((resolve) => tlsProxy.listen(0, '127.0.0.1', resolve));
}, 120_000);
afterAll(async () => {
  tlsProxy?.close();
  if (certs) rmSync(certs, { recursive: true, force: true });
  await app?.close();
});

/** A machine identity with universal auth, viewer in the fixture's project. */
async function operatorIdentity(name: string, ttl = { accessTokenTTL: 3600, accessTokenMaxTTL: 7200 }) {
  const identity = await fx.identity(name, 'member', 'viewer');
  const credentials = await fx.universalAuth(identity.id, ttl);
  return { ...identity, ...credentials };
}

const write = (name: string) => fx.call('POST', `/api/v3/secrets/raw/${name}`, { workspaceId: fx.projectId, environment: 'dev', secretValue: 'value' });
const latest = () => app.services.changes.latestRevision(app.database.db);

describe('TLS', () => {
  test("a private CA and the certificate's name are what it takes; without them the server is unreachable, with a reason", async () => {
    const url = `https://127.0.0.1:${(tlsProxy.address() as AddressInfo).port}`;
    const status = (connection: ServerConnection) => connection.call('GET', '/api/status').finally(() => connection.close());
    await expect(status(new ServerConnection({ url, userAgent: USER_AGENT }))).rejects.toThrow(ServerUnavailableError);
    await expect(status(new ServerConnection({ url, userAgent: USER_AGENT, caFile: join(certs, 'ca.crt') }))).rejects.toThrow(/coffer\.internal|altnames|IP/);
    const answer = await status(new ServerConnection({ url, userAgent: USER_AGENT, caFile: join(certs, 'ca.crt'), tlsServerName: 'coffer.internal' }));
    expect(answer).toMatchObject({ message: expect.any(String) });
  });

  test("a server that is not there is ServerUnavailableError; a refusal is the API's AppError", async () => {
    const nowhere = new ServerConnection({ url: 'http://127.0.0.1:1', userAgent: USER_AGENT });
    await expect(nowhere.call('GET', '/api/status')).rejects.toThrow(ServerUnavailableError);
    await nowhere.close();
    const connection = new ServerConnection({ url: base, userAgent: USER_AGENT });
    const refused = await connection.call('GET', '/api/v1/workspace', { token: 'not-a-token' }).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(AppError);
    expect(refused).toMatchObject({ statusCode: 403 });
    await connection.close();
  });

  test('an answer is parsed with its wire schema: one of another shape fails the call, naming the field and never the value', async () => {
    // something else at the server's URL: a 200 whose installation id is not a string
    const impostor = createHttpServer((_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ installationId: 42, revision: 'not-a-number-but-a-secret', cluster: null }));
    });
    await new Promise<void>((resolve) => impostor.listen(0, '127.0.0.1', resolve));
    const connection = new ServerConnection({ url: `http://127.0.0.1:${(impostor.address() as AddressInfo).port}`, userAgent: USER_AGENT });
    try {
      const failure = await connection.call('GET', '/api/v1/operator/installation', { answer: installationAnswer }).catch((error: unknown) => error);
      expect(failure).toBeInstanceOf(UnexpectedAnswerError);
      expect((failure as Error).message).toMatch(/installationId.*revision/);
      expect((failure as Error).message).not.toContain('not-a-number-but-a-secret');
      // the real server's answer parses
      const real = new ServerConnection({ url: base, userAgent: USER_AGENT });
      const answer = await real.call('GET', '/api/v1/operator/installation', { token: fx.token, answer: installationAnswer }).finally(() => real.close());
      expect(answer).toEqual({ installationId: expect.any(String), revision: expect.any(Number), cluster: null });
    } finally {
      await connection.close();
      impostor.close();
    }
  });
});

describe('universal auth', () => {
  test('renews before expiry and logs in again past the max TTL: calls never see an expired token', async () => {
    const identity = await operatorIdentity('remote-renewing', { accessTokenTTL: 2, accessTokenMaxTTL: 5 });
    const connection = new ServerConnection({ url: base, userAgent: USER_AGENT });
    const keeper = new TokenKeeper(connection, async () => identity);
    try {
      const until = Date.now() + 8_000;
      let calls = 0;
      while (Date.now() < until) {
        const answer = await keeper.withToken((token) => connection.call<any>('GET', `/api/v1/workspace/${fx.projectId}`, { token }));
        expect(answer.workspace.id).toBe(fx.projectId);
        calls++;
        // fixed sleep: paces calls across 8 s so a 2-s token must be renewed, and logged in again past its 5-s max TTL
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
      expect(calls).toBeGreaterThan(10);
      expect(keeper.logins).toBeGreaterThanOrEqual(2);
      const rows = await app.database.db.selectFrom('auditLogs').select(['eventType', 'userAgentType', 'actorMetadata']).execute();
      const events = rows.filter((row) => (row.actorMetadata as { identityId?: string }).identityId === identity.id);
      expect(events.filter((event) => event.eventType === 'renew-identity-access-token').length).toBeGreaterThan(0);
      expect(new Set(events.map((event) => event.userAgentType))).toEqual(new Set(['k8-operator']));
    } finally {
      keeper.stop();
      await connection.close();
    }
  });

  // The token's life is counted from the login's request, not its answer: a slow answer (a loaded server, a slow
  // network) must not make the keeper hand out a token the server already holds as expired.
  test('a login answered late: the token is not handed out past its end as the server counts it', async () => {
    const identity = await operatorIdentity('remote-slow-login', { accessTokenTTL: 3, accessTokenMaxTTL: 60 });
    // a proxy that answers logins 2 s late and passes everything else through
    const proxy = createHttpServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        const slow = request.url!.endsWith('/login');
        const forward = async () => {
          const answer = await fetch(`${base}${request.url}`, {
            method: request.method,
            headers: { 'content-type': 'application/json', ...pick(request.headers) },
            body: chunks.length > 0 ? Buffer.concat(chunks) : undefined,
          });
          const body = Buffer.from(await answer.arrayBuffer());
          if (slow) await new Promise((resolve) => setTimeout(resolve, 2_000));
          response.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? 'application/json' });
          response.end(body);
        };
        void forward().catch(() => response.destroy());
      });
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    const connection = new ServerConnection({ url: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`, userAgent: USER_AGENT });
    const keeper = new TokenKeeper(connection, async () => identity);
    try {
      await keeper.token();
      // 1.2 s after the late answer the server's 3-s token is over: the keeper, counting from its answer, would hold it
      // 1.8 s more; counting from its request, it has already renewed it (or logged in again)
      await new Promise((resolve) => setTimeout(resolve, 1_200));
      const answer = await connection.call<any>('GET', `/api/v1/workspace/${fx.projectId}`, { token: await keeper.token() });
      expect(answer.workspace.id).toBe(fx.projectId);
    } finally {
      keeper.stop();
      await connection.close();
      proxy.close();
    }
  });

  test("a revoked token is replaced by a new login; revoked credentials fail with the server's reason", async () => {
    const identity = await operatorIdentity('remote-revoked');
    const connection = new ServerConnection({ url: base, userAgent: USER_AGENT });
    const keeper = new TokenKeeper(connection, async () => identity);
    try {
      const first = await keeper.token();
      await fx.call('POST', '/api/v1/auth/token/revoke', { accessToken: first });
      const answer = await keeper.withToken((token) => connection.call<any>('GET', `/api/v1/workspace/${fx.projectId}`, { token }));
      expect(answer.workspace.id).toBe(fx.projectId);
      expect(await keeper.token()).not.toBe(first);
      expect(keeper.logins).toBe(2);

      // revoking the client secret revokes the token it logged in with too
      await fx.call('POST', `/api/v1/auth/universal-auth/identities/${identity.id}/client-secrets/${identity.clientSecretId}/revoke`);
      const failure = await keeper.withToken((token) => connection.call('GET', `/api/v1/workspace/${fx.projectId}`, { token })).catch((error: unknown) => error);
      expect(failure).toBeInstanceOf(AppError);
      expect((failure as AppError).statusCode).toBe(401);
      expect((failure as AppError).message).not.toContain(identity.clientSecret);
    } finally {
      keeper.stop();
      await connection.close();
    }
  });
});

describe('following the change stream', () => {
  test('across dropped connections and a revoked token, every change arrives once and in order', async () => {
    const identity = await operatorIdentity('remote-follower');
    const connection = new ServerConnection({ url: base, userAgent: USER_AGENT });
    const keeper = new TokenKeeper(connection, async () => identity);
    const received: StreamedChange[] = [];
    const connections: boolean[] = [];
    const from = await latest();
    const follower = new ChangeFollower(
      connection,
      keeper,
      from,
      {
        onChanges: async (changes) => void received.push(...changes),
        onReset: async () => {
          throw new Error('no reset expected');
        },
        onConnection: (connected) => void connections.push(connected),
      },
      { maxRetryMs: 500 },
    );
    follower.start();
    try {
      await waitUntil('connected', () => follower.connected);
      for (let index = 0; index < 3; index++) await write(`FOLLOW_A_${index}`);
      await waitUntil('the first changes', () => received.length === 3);

      // the server drops every connection; writes go on meanwhile
      app.app.server.closeAllConnections();
      for (let index = 0; index < 3; index++) await write(`FOLLOW_B_${index}`);
      await waitUntil('the changes made while disconnected', () => received.length === 6);

      // the token is revoked: the stream ends with an error event; the follower logs in again and resumes
      await fx.call('POST', '/api/v1/auth/token/revoke', { accessToken: await keeper.token() });
      await waitUntil('a new login', () => keeper.logins === 2);
      for (let index = 0; index < 3; index++) await write(`FOLLOW_C_${index}`);
      await waitUntil('the changes after the new login', () => received.length === 9);

      const to = await latest();
      expect(received.map((change) => change.revision)).toEqual(Array.from({ length: to - from }, (_, index) => from + 1 + index));
      expect(received.every((change) => change.projectId === fx.projectId && change.kind === 'secret')).toBe(true);
      expect(connections.filter((connected) => !connected).length).toBeGreaterThanOrEqual(1);
    } finally {
      await follower.stop();
      keeper.stop();
      await connection.close();
    }
  });

  test("a revision the server does not have starts with a reset, then follows from the server's revision", async () => {
    const identity = await operatorIdentity('remote-reset');
    const connection = new ServerConnection({ url: base, userAgent: USER_AGENT });
    const keeper = new TokenKeeper(connection, async () => identity);
    const resets: number[] = [];
    const received: number[] = [];
    const current = await latest();
    const follower = new ChangeFollower(connection, keeper, current + 500, {
      onChanges: async (changes) => void received.push(...changes.map((change) => change.revision)),
      onReset: async (revision) => void resets.push(revision),
    });
    follower.start();
    try {
      await waitUntil('the reset', () => resets.length === 1);
      expect(resets).toEqual([current]);
      await write('AFTER_REMOTE_RESET');
      await waitUntil('the next change', () => received.length === 1);
      expect(received).toEqual([current + 1]);
    } finally {
      await follower.stop();
      keeper.stop();
      await connection.close();
    }
  });
});

/** The request headers a forwarded call keeps (authorization and the client's identity). */
function pick(headers: Record<string, string | string[] | undefined>): Record<string, string> {
  const kept: Record<string, string> = {};
  for (const name of ['authorization', 'user-agent']) if (typeof headers[name] === 'string') kept[name] = headers[name];
  return kept;
}
