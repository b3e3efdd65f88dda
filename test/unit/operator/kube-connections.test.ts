import { createSecureServer, type Http2SecureServer } from 'node:http2';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { KubeConfig } from '../../../src/kubernetes/client-node.ts';
import { KubeApi } from '../../../src/operator/runtime/kube-api.ts';
import { selfSignedCertificate } from '../../support/local-https.ts';

// An apiserver stand-in that speaks HTTP/2 and HTTP/1.1 (as kube-apiserver does, chosen by ALPN), counting the
// connections made to it: @kubernetes/client-node makes a connection pool per request (shareConnections).
let server: Http2SecureServer;
let url: string;
let ca: string;
const seen: { authorization: string | undefined }[] = [];
let connections = 0;

beforeAll(async () => {
  const { key, cert } = await selfSignedCertificate();
  ca = cert;
  server = createSecureServer({ key, cert, allowHTTP1: true }, (request, response) => {
    seen.push({ authorization: request.headers.authorization });
    response.setHeader('content-type', 'application/json');
    response.end(JSON.stringify({ apiVersion: 'coffer.dev/v1alpha1', kind: 'Integration', metadata: { name: 'app', namespace: 'team' } }));
  });
  server.on('secureConnection', () => connections++);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
});

test('the operator sends its apiserver requests one after another on one kept-alive connection, each with its token', async () => {
  const config = new KubeConfig();
  config.loadFromOptions({
    clusters: [{ name: 'test', server: url, caData: Buffer.from(ca).toString('base64') }],
    users: [{ name: 'operator', token: 'operator-token' }],
    contexts: [{ name: 'test', cluster: 'test', user: 'operator' }],
    currentContext: 'test',
  });
  const kube = new KubeApi(config);
  for (let i = 0; i < 5; i++) expect((await kube.readResource('Integration', 'team', 'app'))?.metadata?.name).toBe('app');
  expect(seen).toHaveLength(5);
  expect(seen.every((request) => request.authorization === 'Bearer operator-token')).toBe(true);
  expect(connections).toBe(1);
});
