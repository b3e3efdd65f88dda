import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { dropLeaseTarget, type MatrixFixture, matrixFixture } from '../support/matrix-fixture.ts';
import { dropRotatedRoles, type RouteRequest, routeTable } from '../support/route-table.ts';
import { snapshotDatabase, startTestApp, type TestApp } from '../support/test-app.ts';

/**
 * No answer tells a caller who may not see a project whether it exists: for
 * every route that names a project (its id or slug in the path, the query or
 * the body) or something inside one by id (environment, folder, import,
 * integration), a stranger (another organization's admin) and an outsider (a
 * member of the organization who is in no project) get, for the real project,
 * exactly the answer (status, error, code, message) they get when every id in
 * the request is replaced by a random one: 404, nothing written or audited.
 */
const app: TestApp = await startTestApp();
let fx: MatrixFixture;
let routes: [string, (persona: 'viewer') => Promise<RouteRequest>][];
const callers: Record<'stranger' | 'outsider', string> = { stranger: '', outsider: '' };

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g;

/** Routes about the caller's own organization, its identities or its own calls: they name no project. */
const ORGANIZATION_ROUTES = [
  /^\w+ \/api\/v1\/identities/,
  /^\w+ \/api\/v1\/auth\//,
  /^\w+ \/api\/v2\/organizations\//,
  /^\w+ \/api\/v1\/invite-org\//,
  /^\w+ \/api\/v1\/operator\/project-claims/,
  /^\w+ \/api\/v1\/operator\/installation/,
  /^GET \/api\/v1\/changes\/wait/,
  // registered clusters and a member's sessions and second factor belong to the organization, not to a project
  /^\w+ \/api\/v1\/clusters/,
  // the console's session is the signed-in user's
  /^\w+ \/api\/v1\/console\/session/,
  /^\w+ \/api\/v1\/organization\/:organizationId\/users\/:userId\/(sessions|mfa)/,
];

/**
 * Things of the organization itself, by id, that only its admins may touch: a member of the organization (the
 * outsider) is refused by its org role before anything is read, the same 403 for a real id and a random one (checked
 * below as for every route); another organization's admin (the stranger) still gets 404 for both.
 */
const ORGANIZATION_ADMIN_ROUTES = [/^\w+ \/api\/v1\/audit-log-streams\/:id/];

/**
 * Operator writes refuse a credential that acts for no cluster (ClusterNotBound) before any project is read: the
 * same 403 whatever the body names, which the comparison below checks too.
 */
const REFUSED_BEFORE_ANY_READ = new Set(['PUT /api/v1/operator/integrations']);

beforeAll(async () => {
  fx = await matrixFixture(app);
  const table = routeTable(fx);
  callers.stranger = fx.tokens.otherOrg;
  callers.outsider = (await fx.ids.identity('outsider', 'member')).token;
  routes = Object.entries(table)
    .filter(([key, entry]) => !entry.ownOrg && !ORGANIZATION_ROUTES.some((pattern) => pattern.test(key)))
    .map(([key, entry]) => [key, entry.build]);
  // the organization's audit log, filtered to one project
  routes.push(['GET /api/v1/organization/audit-logs?projectId', async () => ({ url: '/api/v1/organization/audit-logs', query: { projectId: fx.ids.projectId } })]);
}, 120_000);
afterAll(async () => {
  await app?.close();
  await dropRotatedRoles();
  await dropLeaseTarget();
});

/** The request with every id (but the organization's) and the project slug replaced by random ones, and how to map them back. */
function withRandomIds(request: RouteRequest): { request: RouteRequest; back: (text: string) => string } {
  const replaced = new Map<string, string>();
  const swap = (text: string) =>
    text
      .replace(UUID, (id) => {
        if (id === fx.ids.orgId) return id;
        if (!replaced.has(id)) replaced.set(id, randomUUID());
        return replaced.get(id)!;
      })
      .replaceAll(fx.ids.projectSlug, 'no-such-project-slug');
  const swapped: RouteRequest = JSON.parse(swap(JSON.stringify(request)));
  const back = (text: string) => {
    let result = text.replaceAll('no-such-project-slug', fx.ids.projectSlug);
    for (const [real, random] of replaced) result = result.replaceAll(random, real);
    return result;
  };
  return { request: swapped, back };
}

const namesSomething = (request: RouteRequest) => {
  const text = JSON.stringify(request).replaceAll(fx.ids.orgId, '');
  return new RegExp(UUID.source).test(text) || text.includes(fx.ids.projectSlug);
};

describe.each(['stranger', 'outsider'] as const)('a %s', (caller) => {
  test('gets the same 404 for a real project and a random one, on every route naming a project, and nothing is written', async () => {
    expect(routes.length).toBeGreaterThan(60);
    const differences: string[] = [];
    let compared = 0;
    for (const [key, build] of routes) {
      const real = await build('viewer');
      if (!namesSomething(real)) continue;
      const random = withRandomIds(real);
      const method = key.split(' ')[0]!;
      const token = callers[caller];
      const before = await snapshotDatabase(app.database);
      const realAnswer = await app.request(method, real.url, { token, body: real.body, query: real.query });
      const randomAnswer = await app.request(method, random.request.url, { token, body: random.request.body, query: random.request.query });
      const after = await snapshotDatabase(app.database);
      compared++;
      const { reqId: realId, ...realBody } = realAnswer.body ?? {};
      const { reqId: randomId, ...randomBody } = randomAnswer.body ?? {};
      const seen = `${key}: real ${realAnswer.status} ${JSON.stringify(realBody)}, random ${randomAnswer.status} ${random.back(JSON.stringify(randomBody))}`;
      const refusedFirst =
        (REFUSED_BEFORE_ANY_READ.has(key) && realAnswer.status === 403 && realBody.code === 'ClusterNotBound') ||
        (caller === 'outsider' && ORGANIZATION_ADMIN_ROUTES.some((pattern) => pattern.test(key)) && realAnswer.status === 403 && realBody.code === 'PermissionDenied');
      if (!refusedFirst && (realAnswer.status !== 404 || randomAnswer.status !== 404)) differences.push(`not 404 — ${seen}`);
      else if (JSON.stringify(realBody) !== random.back(JSON.stringify(randomBody))) differences.push(`different — ${seen}`);
      else if (typeof realId !== 'string' || typeof randomId !== 'string') differences.push(`no reqId — ${seen}`);
      if (JSON.stringify(after) !== JSON.stringify(before)) differences.push(`wrote to the database — ${key}`);
    }
    expect(compared).toBeGreaterThan(50);
    expect(differences).toEqual([]);
  }, 300_000);
});

test('a project member without a permission is told 403: it knows the project exists', async () => {
  const response = await app.request('PATCH', `/api/v1/workspace/${fx.ids.projectId}`, { token: fx.tokens.viewer, body: { autoCapitalization: true } });
  expect(response.status).toBe(403);
  expect(response.body).toMatchObject({ statusCode: 403, error: 'PermissionDenied', code: 'PermissionDenied' });
});
