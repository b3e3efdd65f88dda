import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { callCoffer } from '../support/coffer-process.ts';
import { type LeaseTarget, startLeaseTarget } from '../support/lease-target.ts';
import { type Backend, type ConformanceServer, startConformanceServer } from './conformance-server.ts';

/**
 * Dynamic-secret leases as Infisical's clients ask for them, against `coffer serve` on each backend, the roles made
 * on a PostgreSQL server of the test's own (passwords checked):
 * - Infisical CLI v0.43.121, packages/cmd/dynamic_secrets.go (go-sdk v0.7.0): `infisical dynamic-secrets`,
 *   `dynamic-secrets lease create <name> [--ttl]`, `lease list <name>`, `lease renew <id> [--ttl]`,
 *   `lease delete <id>`, each with `--token` or a user's login, `--env` (default dev), `--path` (default /) and
 *   `--projectId` or `--project-slug`. Given a project id it first reads the slug: GET /api/v1/workspace/{id}
 *   (packages/api/api.go CallGetProjectById). It prints `name`, `type`, `defaultTTL`, `maxTTL` of dynamic secrets;
 *   the string values of `data`, `lease.id` and `lease.expireAt` of a new lease; `id`, `expireAt`, `createdAt` of
 *   leases. `lease create` sends `config: {}` (a Kubernetes namespace or SSH principals when given).
 * - Infisical's Kubernetes operator v0.11.5, InfisicalDynamicSecret (internal/services/infisicaldynamicsecret/
 *   reconciler.go, go-sdk v0.8.0; User-Agent `k8-operator/v0.11.5`): it leases (`ttl` = spec.leaseTTL or empty,
 *   `config` null), writes every value of `data` into its Secret (a value that is not a string fails the
 *   reconcile), keeps `lease.id`, `lease.expireAt` and `dynamicSecret.maxTTL` (parsed as digits and one of s, m, h,
 *   d, w; null or empty: no max) in its status; renews when 20 to 30 % of the lease is left, and leases anew when
 *   less than 40 % of the max TTL is left, when the lease has expired, or when a renewal's error holds "TTL cannot be
 *   larger than max ttl" or "Dynamic secret lease with ID"; with `leaseRevocationPolicy: Revoke` it revokes the lease
 *   when the resource is deleted. Given spec.dynamicSecret.projectId it reads the slug first (internal/util/
 *   workspace.go GetProjectByID, `Accept: application/json`).
 * Both go through the go-sdk's resty client (packages/api/dynamic_secrets, the same in v0.7.0 and v0.8.0): headers
 * User-Agent, Authorization, Accept-Encoding: gzip, and Content-Type: application/json with a body; the body is the
 * request struct, every field in its order (empty strings included); the query is Go's sorted encoding.
 */
const OPERATOR = 'k8-operator/v0.11.5';
const CLI = 'cli';

interface Answer {
  status: number;
  body: any;
}
type Send = (method: string, path: string, body?: unknown) => Promise<Answer>;

/** A client that talks as the go-sdk's resty client does, with `userAgent` and `token`. */
function goClient(server: ConformanceServer, userAgent: string, token: string): Send {
  return async (method, path, body) => {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const response = await fetch(`${server.url}${path}`, {
      method,
      headers: {
        'user-agent': userAgent,
        authorization: `Bearer ${token}`,
        'accept-encoding': 'gzip',
        ...(payload === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: payload,
    });
    const text = await response.text();
    return { status: response.status, body: text ? JSON.parse(text) : undefined };
  };
}

/** What the lease routes take besides the lease: the project by slug, the environment and path, in the SDK's field order. */
const placeQuery = (projectSlug: string) => `environmentSlug=dev&path=%2F&projectSlug=${projectSlug}`;
const leaseBody = (name: string, projectSlug: string, ttl: string, config: Record<string, unknown> | null) => ({
  dynamicSecretName: name,
  projectSlug,
  ttl,
  path: '/',
  environmentSlug: 'dev',
  config,
});
const renewBody = (leaseId: string, projectSlug: string, ttl: string) => ({ leaseId, ttl, projectSlug, path: '/', environmentSlug: 'dev', isForced: false });
const revokeBody = (leaseId: string, projectSlug: string) => ({ leaseId, projectSlug, path: '/', environmentSlug: 'dev', isForced: false });

const lasts = (lease: { expireAt: string; createdAt: string }) => Date.parse(lease.expireAt) - Date.parse(lease.createdAt);
const HOUR = 3_600_000;

let target: LeaseTarget;
beforeAll(async () => {
  target = await startLeaseTarget();
});
afterAll(async () => target?.destroy());

describe.each<Backend>(['pglite', 'postgres'])('dynamic-secret leases as the CLI and the operator ask, against coffer serve on %s', (backend) => {
  let server: ConformanceServer;
  let identityToken: string;
  /** The role made by a lease signs in with its password, valid until the lease's expiry (to the second). */
  const expectLive = async (data: { DB_USERNAME: string; DB_PASSWORD: string }, expireAt: string) => {
    expect(await target.signsIn(data.DB_USERNAME, data.DB_PASSWORD)).toBe(true);
    expect((await target.validUntil(data.DB_USERNAME))?.getTime()).toBe(Math.floor(Date.parse(expireAt) / 1000) * 1000);
  };
  const expectRevoked = async (data: { DB_USERNAME: string; DB_PASSWORD: string }) => {
    expect(await target.signsIn(data.DB_USERNAME, data.DB_PASSWORD)).toBe(false);
    expect(await target.validUntil(data.DB_USERNAME)).toBeUndefined();
  };

  beforeAll(async () => {
    server = await startConformanceServer(backend);
    identityToken = await server.identityLogin();
    const at = { projectSlug: server.projectSlug, environmentSlug: 'dev', path: '/' };
    await server.admin('POST', '/api/v1/dynamic-secrets', { ...at, name: 'orders-db', provider: target.provider(), defaultTTL: '1h', maxTTL: '2h' });
    await server.admin('POST', '/api/v1/dynamic-secrets', { ...at, name: 'reports-db', provider: target.provider(), defaultTTL: '1h' });
  });
  afterAll(async () => server?.stop());

  describe('Infisical CLI v0.43.121 `infisical dynamic-secrets`', () => {
    let cli: Send;
    let lease: { id: string; expireAt: string; createdAt: string };
    let data: { DB_USERNAME: string; DB_PASSWORD: string };
    beforeAll(() => {
      cli = goClient(server, CLI, identityToken);
    });

    test('--projectId: GET /api/v1/workspace/{id} → workspace.slug; GET /api/v1/dynamic-secrets → the table it prints', async () => {
      const project = await cli('GET', `/api/v1/workspace/${server.projectId}`);
      expect(project).toMatchObject({ status: 200, body: { workspace: { id: server.projectId, slug: server.projectSlug } } });
      const listed = await cli('GET', `/api/v1/dynamic-secrets?${placeQuery(server.projectSlug)}`);
      expect(listed.status).toBe(200);
      expect(listed.body.dynamicSecrets.map(({ name, type, defaultTTL, maxTTL }: Record<string, string>) => [name, type, defaultTTL, maxTTL])).toEqual([
        ['orders-db', 'sql-database', '1h', '2h'],
        ['reports-db', 'sql-database', '1h', null],
      ]);
    });

    test('lease create orders-db --ttl 30m: GET /api/v1/dynamic-secrets/orders-db, then POST /api/v1/dynamic-secrets/leases with config {}', async () => {
      const config = await cli('GET', `/api/v1/dynamic-secrets/orders-db?${placeQuery(server.projectSlug)}`);
      expect(config).toMatchObject({ status: 200, body: { dynamicSecret: { name: 'orders-db', type: 'sql-database' } } });
      expect(JSON.stringify(config.body)).not.toContain(target.provider().inputs.password);
      const created = await cli('POST', '/api/v1/dynamic-secrets/leases', leaseBody('orders-db', server.projectSlug, '30m', {}));
      expect(created.status).toBe(200);
      ({ lease, data } = created.body);
      expect(Object.keys(data).sort()).toEqual(['DB_PASSWORD', 'DB_USERNAME']);
      expect(lasts(lease)).toBe(HOUR / 2);
      await expectLive(data, lease.expireAt);
    });

    test('lease list orders-db: GET /api/v1/dynamic-secrets/orders-db/leases → id, expireAt, createdAt', async () => {
      const listed = await cli('GET', `/api/v1/dynamic-secrets/orders-db/leases?${placeQuery(server.projectSlug)}`);
      expect(listed.status).toBe(200);
      expect(listed.body.leases).toContainEqual(expect.objectContaining({ id: lease.id, expireAt: lease.expireAt, createdAt: lease.createdAt }));
      expect(JSON.stringify(listed.body)).not.toContain(data.DB_PASSWORD);
    });

    test('lease renew <id> --ttl 15m: POST /api/v1/dynamic-secrets/leases/{id}/renew → the lease, its expiry and the role moved on', async () => {
      const renewed = await cli('POST', `/api/v1/dynamic-secrets/leases/${lease.id}/renew`, renewBody(lease.id, server.projectSlug, '15m'));
      expect(renewed.status).toBe(200);
      expect(Date.parse(renewed.body.lease.expireAt) - Date.parse(lease.expireAt)).toBe(HOUR / 4);
      await expectLive(data, renewed.body.lease.expireAt);
    });

    test('lease delete <id>: DELETE /api/v1/dynamic-secrets/leases/{id} → the lease; its role no longer signs in', async () => {
      const revoked = await cli('DELETE', `/api/v1/dynamic-secrets/leases/${lease.id}`, revokeBody(lease.id, server.projectSlug));
      expect(revoked).toMatchObject({ status: 200, body: { lease: { id: lease.id } } });
      await expectRevoked(data);
      const listed = await cli('GET', `/api/v1/dynamic-secrets/orders-db/leases?${placeQuery(server.projectSlug)}`);
      expect(listed.body.leases.map((item: { id: string }) => item.id)).not.toContain(lease.id);
    });

    test('the errors it prints: an unknown name is 404, a TTL over the max 400, each with its message; no role is made', async () => {
      const unknown = await cli('GET', `/api/v1/dynamic-secrets/nope?${placeQuery(server.projectSlug)}`);
      expect(unknown).toMatchObject({ status: 404, body: { message: "Dynamic secret with name 'nope' not found" } });
      const held = await cli('GET', `/api/v1/dynamic-secrets/orders-db/leases?${placeQuery(server.projectSlug)}`);
      const tooLong = await cli('POST', '/api/v1/dynamic-secrets/leases', leaseBody('orders-db', server.projectSlug, '3h', {}));
      expect(tooLong).toMatchObject({ status: 400, body: { message: 'TTL cannot be larger than max TTL' } });
      expect((await cli('GET', `/api/v1/dynamic-secrets/orders-db/leases?${placeQuery(server.projectSlug)}`)).body.leases).toEqual(held.body.leases);
    });

    test("a user's login (`infisical login`, then `lease create`): the session token leases and revokes too", async () => {
      const login = await callCoffer(server.server, 'POST', '/api/v3/auth/login', undefined, { email: server.email, password: server.password });
      const session = await callCoffer(server.server, 'POST', '/api/v3/auth/select-organization', login.body.accessToken, { organizationId: server.orgId });
      const user = goClient(server, CLI, session.body.token);
      const created = await user('POST', '/api/v1/dynamic-secrets/leases', leaseBody('orders-db', server.projectSlug, '', {}));
      expect(created.status).toBe(200);
      expect(lasts(created.body.lease)).toBe(HOUR);
      await expectLive(created.body.data, created.body.lease.expireAt);
      expect((await user('DELETE', `/api/v1/dynamic-secrets/leases/${created.body.lease.id}`, revokeBody(created.body.lease.id, server.projectSlug))).status).toBe(200);
      await expectRevoked(created.body.data);
    });
  });

  describe("Infisical's operator v0.11.5 InfisicalDynamicSecret", () => {
    let operator: Send;
    beforeAll(() => {
      operator = goClient(server, OPERATOR, identityToken);
    });
    const lease = (name: string, ttl = '') => operator('POST', '/api/v1/dynamic-secrets/leases', leaseBody(name, server.projectSlug, ttl, null));
    const renew = (leaseId: string, ttl = '') => operator('POST', `/api/v1/dynamic-secrets/leases/${leaseId}/renew`, renewBody(leaseId, server.projectSlug, ttl));

    test('spec.dynamicSecret.projectId: GET /api/v1/workspace/{id} with Accept: application/json → workspace.slug', async () => {
      const response = await fetch(`${server.url}/api/v1/workspace/${server.projectId}`, {
        headers: { 'user-agent': OPERATOR, authorization: `Bearer ${identityToken}`, accept: 'application/json', 'accept-encoding': 'gzip' },
      });
      expect(response.status).toBe(200);
      expect(((await response.json()) as { workspace: { slug: string } }).workspace.slug).toBe(server.projectSlug);
    });

    test('a lease with config null: every data value a string, maxTTL its interval parser reads, the role signs in', async () => {
      const created = await lease('orders-db');
      expect(created.status).toBe(200);
      const { lease: made, dynamicSecret, data } = created.body;
      expect(Object.values(data).every((value) => typeof value === 'string')).toBe(true);
      expect(dynamicSecret).toMatchObject({ id: expect.any(String), maxTTL: expect.stringMatching(/^\d+[smhdw]$/) });
      expect(lasts(made)).toBe(HOUR);
      await expectLive(data, made.expireAt);
      // spec.leaseTTL sent as ttl
      const shorter = await lease('orders-db', '30m');
      expect(lasts(shorter.body.lease)).toBe(HOUR / 2);
      for (const held of [made, shorter.body.lease])
        expect((await operator('DELETE', `/api/v1/dynamic-secrets/leases/${held.id}`, revokeBody(held.id, server.projectSlug))).status).toBe(200);
    });

    test('no max TTL: maxTTL null (the operator reads "" and only renews)', async () => {
      const created = await lease('reports-db');
      expect(created.body.dynamicSecret).toMatchObject({ name: 'reports-db', maxTTL: null });
      const renewed = await renew(created.body.lease.id);
      expect(Date.parse(renewed.body.lease.expireAt) - Date.parse(created.body.lease.expireAt)).toBe(HOUR);
      expect((await operator('DELETE', `/api/v1/dynamic-secrets/leases/${created.body.lease.id}`, revokeBody(created.body.lease.id, server.projectSlug))).status).toBe(
        200,
      );
    });

    test('renew before expiry (ttl empty: the default TTL) moves expireAt and the role; one past the max TTL is a 400 with the words that make it lease anew', async () => {
      const created = await lease('orders-db');
      const { id } = created.body.lease;
      const renewed = await renew(id);
      expect(renewed.status).toBe(200);
      expect(renewed.body.lease).toMatchObject({ id });
      expect(Date.parse(renewed.body.lease.expireAt) - Date.parse(created.body.lease.expireAt)).toBe(HOUR);
      await expectLive(created.body.data, renewed.body.lease.expireAt);

      const pastMax = await renew(id);
      expect(pastMax.status).toBe(400);
      expect(pastMax.body.message).toContain('TTL cannot be larger than max ttl');
      await expectLive(created.body.data, renewed.body.lease.expireAt);
      // what it does then: a new lease, written over its Secret; the old one runs to its expiry
      const fresh = await lease('orders-db');
      expect(fresh.status).toBe(200);
      await expectLive(fresh.body.data, fresh.body.lease.expireAt);
      for (const held of [id, fresh.body.lease.id])
        expect((await operator('DELETE', `/api/v1/dynamic-secrets/leases/${held}`, revokeBody(held, server.projectSlug))).status).toBe(200);
    });

    test('renewing a lease revoked meanwhile is a 404 with the words that make it lease anew', async () => {
      const created = await lease('orders-db');
      const { id } = created.body.lease;
      await server.admin('DELETE', `/api/v1/dynamic-secrets/leases/${id}`, { projectSlug: server.projectSlug, environmentSlug: 'dev', path: '/' });
      const gone = await renew(id);
      expect(gone.status).toBe(404);
      expect(gone.body.message).toContain('Dynamic secret lease with ID');
      await expectRevoked(created.body.data);
    });

    test('leaseRevocationPolicy Revoke, resource deleted: DELETE /api/v1/dynamic-secrets/leases/{id} → the role no longer signs in, the lease is gone', async () => {
      const created = await lease('orders-db');
      const { id } = created.body.lease;
      await expectLive(created.body.data, created.body.lease.expireAt);
      const revoked = await operator('DELETE', `/api/v1/dynamic-secrets/leases/${id}`, revokeBody(id, server.projectSlug));
      expect(revoked).toMatchObject({ status: 200, body: { lease: { id } } });
      await expectRevoked(created.body.data);
      expect((await operator('GET', `/api/v1/dynamic-secrets/leases/${id}?${placeQuery(server.projectSlug)}`)).status).toBe(404);
    });
  });
});
