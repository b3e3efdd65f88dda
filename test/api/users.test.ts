import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { type AccessFixture, accessFixture } from '../support/access-fixture.ts';
import { snapshotDatabase, startTestApp, type TestApp } from '../support/test-app.ts';

let app: TestApp;
let fx: AccessFixture;

beforeAll(async () => {
  app = await startTestApp();
  fx = await accessFixture(app);
});
afterAll(async () => app?.close());

async function invite(email: string, role = 'member') {
  const response = await app.request('POST', '/api/v1/invite-org/signup', {
    token: fx.token,
    body: { inviteeEmails: [email], organizationId: fx.orgId, organizationRoleSlug: role },
  });
  expect(response.status).toBe(200);
  return response.body.invites[0] as { email: string; membershipId: string; inviteToken: string };
}

const accept = (body: Record<string, unknown>) => app.request('POST', '/api/v1/invite-org/accept', { body });
const login = (email: string, password: string) => app.request('POST', '/api/v1/auth/login', { body: { email, password } });

describe('invites', () => {
  test('an invited user shows as invited, accepts with a password, logs in and acts as a user', async () => {
    const invited = await invite('Dev@Example.com');
    expect(invited.inviteToken).toMatch(/^[0-9a-f]{64}$/);
    const listed = await app.request('GET', `/api/v2/organizations/${fx.orgId}/memberships`, { token: fx.token });
    expect(listed.status).toBe(200);
    expect(listed.body.users).toContainEqual(
      expect.objectContaining({
        id: invited.membershipId,
        role: 'member',
        status: 'invited',
        inviteEmail: 'dev@example.com',
        orgId: fx.orgId,
        user: expect.objectContaining({ email: 'dev@example.com', username: 'dev@example.com', isEmailVerified: false }),
      }),
    );
    expect(JSON.stringify(await snapshotDatabase(app.database))).not.toContain(invited.inviteToken);

    expect((await login('dev@example.com', 'a long password')).status).toBe(401);
    const accepted = await accept({
      email: 'dev@example.com',
      organizationId: fx.orgId,
      inviteToken: invited.inviteToken,
      password: 'a long password',
      firstName: 'Dev',
    });
    expect(accepted.status).toBe(200);
    expect(accepted.body.user).toMatchObject({ email: 'dev@example.com', firstName: 'Dev' });
    expect((await accept({ email: 'dev@example.com', organizationId: fx.orgId, inviteToken: invited.inviteToken, password: 'a long password' })).status).toBe(401);

    const loggedIn = await login('DEV@example.com', 'a long password');
    expect(loggedIn.status).toBe(200);
    expect(loggedIn.body).toMatchObject({ tokenType: 'Bearer', expiresIn: 864000, organizationId: fx.orgId });
    const userToken = loggedIn.body.accessToken;
    expect((await app.request('GET', '/api/v1/workspace', { token: userToken })).body.workspaces).toEqual([]);
    const asUser = await app.request('GET', `/api/v2/organizations/${fx.orgId}/memberships`, { token: userToken });
    expect(asUser.body.users.find((user: { inviteEmail: string }) => user.inviteEmail === 'dev@example.com')).toMatchObject({ status: 'accepted' });

    const added = await app.request('POST', `/api/v2/workspace/${fx.projectId}/memberships`, { token: fx.token, body: { emails: ['dev@example.com'] } });
    expect(added.status).toBe(200);
    const membershipId = added.body.memberships[0].id;
    const created = await app.request('POST', '/api/v3/secrets/raw/FROM_USER', {
      token: userToken,
      body: { workspaceId: fx.projectId, environment: 'dev', secretValue: 'x' },
    });
    expect(created.status).toBe(200);
    const audit = await app.database.db
      .selectFrom('auditLogs')
      .selectAll()
      .where('eventType', '=', 'create-secret')
      .orderBy('createdAt', 'desc')
      .executeTakeFirstOrThrow();
    expect(audit).toMatchObject({ actor: 'user', actorMetadata: expect.objectContaining({ email: 'dev@example.com' }) });

    const roles = await app.request('PATCH', `/api/v1/workspace/${fx.projectId}/memberships/${membershipId}`, { token: fx.token, body: { roles: [{ role: 'viewer' }] } });
    expect(roles.body.roles).toEqual([expect.objectContaining({ role: 'viewer', projectMembershipId: membershipId, isTemporary: false, customRoleId: null })]);
    const members = await app.request('GET', `/api/v1/workspace/${fx.projectId}/memberships`, { token: userToken });
    expect(members.body.memberships).toContainEqual(
      expect.objectContaining({ id: membershipId, user: expect.objectContaining({ email: 'dev@example.com' }), roles: [expect.objectContaining({ role: 'viewer' })] }),
    );
    expect(
      (await app.request('POST', '/api/v3/secrets/raw/AS_VIEWER', { token: userToken, body: { workspaceId: fx.projectId, environment: 'dev', secretValue: 'x' } }))
        .status,
    ).toBe(403);

    expect((await app.request('POST', '/api/v1/auth/logout', { token: userToken })).status).toBe(200);
    expect((await app.request('GET', '/api/v1/workspace', { token: userToken })).status).toBe(401);
    expect(app.logs.join('\n')).not.toContain('a long password');
  });

  test('wrong password, unknown email and a bad invite answer 401 and change nothing', async () => {
    const invited = await invite('second@example.com');
    const before = await snapshotDatabase(app.database, ['login_throttles']);
    const wrongPassword = await login('admin@example.com', 'not the password');
    const unknown = await login('nobody@example.com', 'not the password');
    expect([wrongPassword.status, unknown.status]).toEqual([401, 401]);
    expect(wrongPassword.body.message).toBe(unknown.body.message);
    for (const body of [
      { email: 'second@example.com', organizationId: fx.orgId, inviteToken: 'f'.repeat(64), password: 'long enough' },
      { email: 'other@example.com', organizationId: fx.orgId, inviteToken: invited.inviteToken, password: 'long enough' },
      { email: 'second@example.com', organizationId: '00000000-0000-0000-0000-000000000000', inviteToken: invited.inviteToken, password: 'long enough' },
    ]) {
      expect((await accept(body)).status).toBe(401);
    }
    expect((await accept({ email: 'second@example.com', organizationId: fx.orgId, inviteToken: invited.inviteToken, password: 'short' })).status).toBe(422);
    // nothing changed but the failures counted (login throttling)
    expect(await snapshotDatabase(app.database, ['login_throttles'])).toEqual(before);
  });

  test('an org member cannot invite (admins only) and nobody invites above their role', async () => {
    const member = await fx.identity('inviter');
    const before = await snapshotDatabase(app.database);
    const byMember = await app.request('POST', '/api/v1/invite-org/signup', {
      token: member.token,
      body: { inviteeEmails: ['x@example.com'], organizationId: fx.orgId },
    });
    expect(byMember.status).toBe(403);
    expect((await app.request('POST', '/api/v1/invite-org/signup', { token: fx.token, body: { inviteeEmails: [], organizationId: fx.orgId } })).status).toBe(422);
    expect(await snapshotDatabase(app.database)).toEqual(before);
  });
});
