import { createSecureServer, type Http2SecureServer, type Http2ServerRequest, type Http2ServerResponse } from 'node:http2';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import type { V1Secret } from '@kubernetes/client-node';
import { afterAll, beforeAll, beforeEach, expect, test } from 'vitest';
import { KubeConfig } from '../../../src/kubernetes/client-node.ts';
import { apiRefusal, describeError, isConflict, isKubeNotFound, KubeApi } from '../../../src/operator/runtime/kube-api.ts';
import { VERSION } from '../../../src/version.ts';
import { selfSignedCertificate } from '../../support/local-https.ts';

// An apiserver stand-in that speaks HTTP/2 and HTTP/1.1 (as kube-apiserver does, chosen by ALPN), counting the
// connections made to it (@kubernetes/client-node makes a connection pool per request: shareConnections) and
// keeping what each request sent; `answer` says what the next requests get.
let server: Http2SecureServer;
let url: string;
let ca: string;
interface SeenRequest {
  method: string | undefined;
  url: string | undefined;
  headers: Http2ServerRequest['headers'];
  body: string;
}
const seen: SeenRequest[] = [];
let connections = 0;
type Answer = (request: SeenRequest, response: Http2ServerResponse) => void;
const integration = { apiVersion: 'coffer.dev/v1alpha1', kind: 'Integration', metadata: { name: 'app', namespace: 'team', resourceVersion: '7' } };
const answerIntegration: Answer = (_request, response) => {
  response.setHeader('content-type', 'application/json');
  response.end(JSON.stringify(integration));
};
let answer = answerIntegration;

beforeAll(async () => {
  const { key, cert } = await selfSignedCertificate();
  ca = cert;
  server = createSecureServer({ key, cert, allowHTTP1: true }, (request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const received = { method: request.method, url: request.url, headers: request.headers, body: Buffer.concat(chunks).toString('utf8') };
      seen.push(received);
      answer(received, response);
    });
  });
  server.on('secureConnection', () => connections++);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
});
beforeEach(() => {
  seen.length = 0;
  connections = 0;
  answer = answerIntegration;
});

function kubeApiFor(server: string): KubeApi {
  const config = new KubeConfig();
  config.loadFromOptions({
    clusters: [{ name: 'test', server, caData: Buffer.from(ca).toString('base64') }],
    users: [{ name: 'operator', token: 'operator-token' }],
    contexts: [{ name: 'test', cluster: 'test', user: 'operator' }],
    currentContext: 'test',
  });
  return new KubeApi(config);
}

function status(code: number, reason: string, message: string): Answer {
  return (_request, response) => {
    response.statusCode = code;
    response.setHeader('content-type', 'application/json');
    response.end(JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', reason, message, code, details: { causes: [{ field: 'status' }] } }));
  };
}

test('the operator sends its apiserver requests one after another on one kept-alive connection, each with its token', async () => {
  const kube = kubeApiFor(url);
  for (let i = 0; i < 5; i++) expect((await kube.readResource('Integration', 'team', 'app'))?.metadata?.name).toBe('app');
  expect(seen).toHaveLength(5);
  expect(seen.every((request) => request.headers.authorization === 'Bearer operator-token')).toBe(true);
  expect(connections).toBe(1);
});

test('a write goes with its method, path, query, content type, body and the user agent, and answers the object as the apiserver sent it', async () => {
  const kube = kubeApiFor(url);
  const written = await kube.replaceStatus('Integration', { ...integration, status: { conditions: [] } });
  expect(written).toEqual(integration);
  expect(seen).toHaveLength(1);
  const [request] = seen;
  expect(request!.method).toBe('PUT');
  expect(request!.url).toBe('/apis/coffer.dev/v1alpha1/namespaces/team/integrations/app/status');
  expect(request!.headers['content-type']).toBe('application/json');
  expect(request!.headers['user-agent']).toBe(`coffer/${VERSION}`);
  expect(JSON.parse(request!.body)).toEqual({ ...integration, status: { conditions: [] } });

  // a Secret applied key for key: a key named __proto__ is sent and answered as a key (the client asks first
  // whether Secrets are namespaced)
  answer = (received, response) => {
    response.setHeader('content-type', 'application/json');
    const resources = { kind: 'APIResourceList', groupVersion: 'v1', resources: [{ name: 'secrets', namespaced: true, kind: 'Secret', verbs: ['patch'] }] };
    response.end(received.method === 'GET' ? JSON.stringify(resources) : received.body);
  };
  const secret = JSON.parse('{"apiVersion":"v1","kind":"Secret","metadata":{"name":"app","namespace":"team"},"data":{"__proto__":"eA=="}}') as V1Secret;
  const applied = await kube.applyTarget(secret, { fieldManager: 'coffer-team-app', force: false });
  expect(Object.keys(applied.data!)).toEqual(['__proto__']);
  const apply = seen.at(-1)!;
  expect(apply.method).toBe('PATCH');
  expect(apply.url).toBe('/api/v1/namespaces/team/secrets/app?fieldManager=coffer-team-app&force=false');
  expect(apply.headers['content-type']).toBe('application/apply-patch+yaml');
});

test('an answer the apiserver compressed is read as the object it holds', async () => {
  answer = (request, response) => {
    expect(request.headers['accept-encoding']).toContain('gzip');
    response.setHeader('content-type', 'application/json');
    response.setHeader('content-encoding', 'gzip');
    response.end(gzipSync(JSON.stringify(integration)));
  };
  expect(await kubeApiFor(url).readResource('Integration', 'team', 'app')).toEqual(integration);
});

test("a refusal is the apiserver's status, reason and message; a missing object is undefined where the caller asks for one", async () => {
  const kube = kubeApiFor(url);
  answer = status(409, 'Conflict', 'the object has been modified; please apply your changes to the latest version and try again');
  const conflict = await kube.replaceStatus('Integration', integration).catch((error: unknown) => error);
  expect(isConflict(conflict)).toBe(true);
  expect(apiRefusal(conflict)).toEqual({
    status: 409,
    reason: 'Conflict',
    message: 'the object has been modified; please apply your changes to the latest version and try again',
    causes: [{ field: 'status' }],
  });

  answer = status(404, 'NotFound', 'integrations.coffer.dev "app" not found');
  expect(await kube.readResource('Integration', 'team', 'app')).toBeUndefined();
  const missing = await kube.replaceStatus('Integration', integration).catch((error: unknown) => error);
  expect(isKubeNotFound(missing)).toBe(true);
  expect(describeError(missing)).toEqual({ status: 404, reason: 'NotFound', message: 'integrations.coffer.dev "app" not found' });
});

test('an apiserver that is not there fails the request with a network error, not an answer', async () => {
  const closed = createSecureServer();
  await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
  const port = (closed.address() as AddressInfo).port;
  await new Promise((resolve) => closed.close(resolve));
  const failure = await kubeApiFor(`https://127.0.0.1:${port}`)
    .readResource('Integration', 'team', 'app')
    .catch((error: unknown) => error);
  expect(failure).toBeInstanceOf(Error);
  expect(apiRefusal(failure)).toBeUndefined();
  expect(isKubeNotFound(failure)).toBe(false);
  expect(describeError(failure)).toMatchObject({ code: 'ECONNREFUSED' });
});
