import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { type AccessFixture, accessFixture } from '../support/access-fixture.ts';
import { snapshotDatabase, startTestApp, type TestApp } from '../support/test-app.ts';

/**
 * The organization audit export shows a caller the entries of the projects
 * whose audit log it may read, and organization-level entries only when its
 * org role may read the organization's audit log. The project export is
 * unchanged.
 */
let app: TestApp;
let fx: AccessFixture;
let projectB: string;
const callers: Record<string, { id: string; token: string }> = {};

const orgExport = (token: string, query: Record<string, string> = {}) =>
  app.request('GET', '/api/v1/organization/audit-logs', { token, query: { limit: '1000', ...query } });
const projectIds = (entries: { projectId: string | null }[]) => [...new Set(entries.map((entry) => entry.projectId))].sort((a, b) => String(a).localeCompare(String(b)));

beforeAll(async () => {
  app = await startTestApp();
  fx = await accessFixture(app, 'project-a');
  projectB = (await fx.call('POST', '/api/v2/workspace', { projectName: 'Project B', slug: 'project-b' })).project.id;
  // Entries in both projects, one of them naming a secret only B's members may know of.
  await fx.call('POST', '/api/v3/secrets/raw/B_ONLY_SECRET_NAME', { workspaceId: projectB, environment: 'dev', secretValue: 'b-value-123' });
  await fx.call('POST', '/api/v3/secrets/raw/A_SECRET', { workspaceId: fx.projectId, environment: 'dev', secretValue: 'a-value-123' });
  await fx.call('POST', `/api/v1/workspace/${fx.projectId}/roles`, { slug: 'no-audit', name: 'No audit', permissions: [{ subject: 'secrets', action: ['read'] }] });
  callers.orgMemberInA = await fx.identity('org-member-in-a', 'member', 'member');
  callers.noAccessOrgAdminOfA = await fx.identity('no-access-admin-of-a', 'no-access', 'admin');
  callers.orgMemberWithoutAuditRole = await fx.identity('no-audit-role', 'member', 'no-audit');
  callers.noAccessOrgNoProject = await fx.identity('nobody', 'no-access');
  // an organization-level event
  await fx.call('POST', '/api/v1/identities', { name: 'org-level-event', organizationId: fx.orgId });
}, 60_000);
afterAll(async () => app?.close());

describe('GET /api/v1/organization/audit-logs', () => {
  test('an org member who is not in project B never sees B’s entries (event types or secret names)', async () => {
    const response = await orgExport(callers.orgMemberInA!.token);
    expect(response.status).toBe(200);
    expect(projectIds(response.body.auditLogs)).toEqual([fx.projectId, null].sort((a, b) => String(a).localeCompare(String(b))));
    expect(JSON.stringify(response.body)).not.toContain('B_ONLY_SECRET_NAME');
    expect(JSON.stringify(response.body)).not.toContain(projectB);
  });

  test('organization-level entries only for an org role that may read the organization’s audit log', async () => {
    const member = await orgExport(callers.orgMemberInA!.token, { eventType: 'create-identity' });
    expect(member.body.auditLogs.some((entry: { event: { metadata: { name?: string } } }) => entry.event.metadata.name === 'org-level-event')).toBe(true);
    const noAccess = await orgExport(callers.noAccessOrgAdminOfA!.token);
    expect(noAccess.status).toBe(200);
    expect(projectIds(noAccess.body.auditLogs)).toEqual([fx.projectId]);
  });

  test('a project role without audit-log read hides that project too; nothing readable → an empty page', async () => {
    const noAuditRole = await orgExport(callers.orgMemberWithoutAuditRole!.token);
    expect(projectIds(noAuditRole.body.auditLogs)).toEqual([null]);
    const nobody = await orgExport(callers.noAccessOrgNoProject!.token);
    expect(nobody.status).toBe(200);
    expect(nobody.body.auditLogs).toEqual([]);
  });

  test('the org admin sees every project and the organization', async () => {
    const admin = await orgExport(fx.token);
    expect(projectIds(admin.body.auditLogs)).toEqual([fx.projectId, projectB, null].sort((a, b) => String(a).localeCompare(String(b))));
  });

  test('filters never widen the view: projectId of a project the caller is not in answers as an unknown one (404), metadata filters stay inside', async () => {
    const before = await snapshotDatabase(app.database);
    const notIn = await orgExport(callers.orgMemberInA!.token, { projectId: projectB });
    const unknown = await orgExport(callers.orgMemberInA!.token, { projectId: '00000000-0000-4000-8000-000000000000' });
    expect(notIn.status).toBe(404);
    expect(notIn.body).toMatchObject({ statusCode: 404, error: 'NotFound', code: 'ProjectNotFound', reqId: expect.any(String) });
    const { reqId: _a, ...notInAnswer } = notIn.body;
    const { reqId: _b, ...unknownAnswer } = unknown.body;
    expect(unknownAnswer).toEqual(notInAnswer);
    const noAudit = await orgExport(callers.orgMemberWithoutAuditRole!.token, { projectId: fx.projectId });
    expect(noAudit.status).toBe(403);
    const byName = await orgExport(callers.orgMemberInA!.token, { eventMetadata: 'secretKey=B_ONLY_SECRET_NAME' });
    expect(byName.body.auditLogs).toEqual([]);
    const allowed = await orgExport(callers.orgMemberInA!.token, { projectId: fx.projectId });
    expect(projectIds(allowed.body.auditLogs)).toEqual([fx.projectId]);
    expect(await snapshotDatabase(app.database)).toEqual(before);
  });
});

describe('GET /api/v1/workspace/{workspaceId}/audit-logs is unchanged', () => {
  test('its own project for a member; another project 404, as an unknown one; the no-access org role with a project role reads its project', async () => {
    expect((await app.request('GET', `/api/v1/workspace/${fx.projectId}/audit-logs`, { token: callers.orgMemberInA!.token })).status).toBe(200);
    expect((await app.request('GET', `/api/v1/workspace/${projectB}/audit-logs`, { token: callers.orgMemberInA!.token })).body).toMatchObject({
      statusCode: 404,
      code: 'ProjectNotFound',
    });
    expect((await app.request('GET', `/api/v1/workspace/${fx.projectId}/audit-logs`, { token: callers.noAccessOrgAdminOfA!.token })).status).toBe(200);
  });
});
