import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { callCoffer } from '../support/coffer-process.ts';
import { openEventStream } from '../support/event-stream.ts';
import { waitFor } from '../k8s/helpers.ts';
import { type Backend, type ConformanceServer, startConformanceServer } from './conformance-server.ts';

/**
 * Infisical's Kubernetes operator v0.11.5, instant updates (internal/api/api.go
 * CallSubscribeProjectEventsWithBaseURL; run for real against Coffer, see README "Infisical clients"):
 * an InfisicalSecret syncing dev "/" subscribes to the four events with conditions {environmentSlug,
 * secretPath}. Its Secret holds what "/" reads through imports and secret references, so a change
 * there must reach it too: as `secret:import-mutation` for the subscribed place, as the reference
 * sends it to importers. Without it the operator waited for its hourly resync.
 */
const OPERATOR_EVENTS = ['secret:create', 'secret:update', 'secret:delete', 'secret:import-mutation'];

describe.each<Backend>(['pglite', 'postgres'])("Infisical's operator v0.11.5 instant updates against coffer serve on %s", (backend) => {
  let server: ConformanceServer;
  let operatorToken: string;
  const admin = async (method: string, path: string, body: unknown) => {
    const response = await callCoffer(server.server, method, path, server.adminToken, body);
    expect(response.status, `${method} ${path}`).toBe(200);
    return response.body;
  };
  const write = (name: string, secretPath: string, secretValue: string, method = 'POST') =>
    admin(method, `/api/v3/secrets/raw/${name}`, { workspaceId: server.projectId, environment: 'dev', secretPath, secretValue });

  beforeAll(async () => {
    server = await startConformanceServer(backend);
    operatorToken = await server.identityLogin();
    await admin('POST', '/api/v1/folders', { workspaceId: server.projectId, environment: 'dev', path: '/', name: 'referenced' });
    await admin('POST', '/api/v1/folders', { workspaceId: server.projectId, environment: 'dev', path: '/', name: 'unrelated' });
    await write('REF_SOURCE', '/referenced', 'one');
  });
  afterAll(async () => server?.stop());

  test('a change in an imported folder and in a referenced folder arrives as secret:import-mutation for "/"; an unrelated folder stays silent', async () => {
    const conditions = { environmentSlug: 'dev', secretPath: '/' };
    const stream = await openEventStream(`${server.url}/api/v1/events/subscribe/project-events`, {
      method: 'POST',
      token: operatorToken,
      headers: { 'user-agent': 'k8-operator/v0.11.5' },
      body: { projectId: server.projectId, register: OPERATOR_EVENTS.map((event) => ({ event, conditions })) },
    });
    const changes = () => stream.events.filter((event) => event.event === 'secret-manager');
    try {
      expect(stream.response.status).toBe(200);
      const names = () => changes().map((change) => change.data.data.event as string);

      // through the import "/" has of /shared
      await write('FROM_IMPORT', '/shared', 'changed', 'PATCH');
      await waitFor('the imported change', async () => names().length === 1);
      expect(changes()[0]!.data.data).toMatchObject({ event: 'secret:import-mutation', payload: [{ environment: 'dev', secretPath: '/' }] });

      // a reference written in "/" (a direct change), then a change of what it references
      await write('REFERS', '/', '${dev.referenced.REF_SOURCE}-suffix');
      await waitFor('the new secret', async () => names().length === 2);
      expect(names()[1]).toBe('secret:update');
      await write('REF_SOURCE', '/referenced', 'two', 'PATCH');
      await waitFor('the referenced change', async () => names().length === 3);
      expect(changes()[2]!.data.data).toMatchObject({ event: 'secret:import-mutation', payload: [{ environment: 'dev', secretPath: '/' }] });

      // nothing for a folder "/" does not read: the next event is the direct change after it
      await write('ELSEWHERE', '/unrelated', 'x');
      await write('BASE', '/', 'changed', 'PATCH');
      await waitFor('the direct change', async () => names().includes('secret:update') && names().length >= 4);
      expect(names().slice(3)).toEqual(['secret:update']);
    } finally {
      stream.close();
    }
  });
});
