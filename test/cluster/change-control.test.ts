import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createTestNamespace, type TestNamespace } from '../k8s/helpers.ts';
import { type CofferProcess, callCoffer, stopCoffer } from '../support/coffer-process.ts';
import { type Cluster, clusterClients, cofferEnvironment, putSecret, startApi, startOperatorProcess } from '../support/operator-fixture.ts';

/**
 * Change control as the cluster sees it (issue 33): a change request to an approval-protected environment leaves its
 * Integration's Secret as it was until the request is merged (while a later write elsewhere is synced), then the merge
 * reaches it; a restore to an earlier revision reaches the Secret like any write.
 */
let cluster: Cluster;
let namespace: TestNamespace;
let api: CofferProcess;
let operator: CofferProcess;
let token: string;
let projectId: string;
let orgId: string;
const slug = `gated-${Date.now().toString(36)}`;
const dev = () => ({ projectId, environment: 'dev', secretPath: '/' });
const prod = () => ({ projectId, environment: 'prod', secretPath: '/' });

async function ok(method: string, path: string, caller: string, body?: unknown) {
  const response = await callCoffer(api, method, path, caller, body);
  if (response.status !== 200) throw new Error(`${method} ${path} → ${response.status} ${JSON.stringify(response.body)}`);
  return response;
}

/** A user invited into the organization and the project (with `role`), logged in with a password. */
async function projectUser(email: string, role: string): Promise<{ id: string; token: string }> {
  const password = `${email} password`;
  const [{ inviteToken }] = (await ok('POST', '/api/v1/invite-org/signup', token, { inviteeEmails: [email], organizationId: orgId })).body.invites;
  await ok('POST', '/api/v1/invite-org/accept', '', { email, organizationId: orgId, inviteToken, password });
  await ok('POST', `/api/v2/workspace/${projectId}/memberships`, token, { emails: [email], roleSlugs: [role] });
  const users = (await ok('GET', `/api/v2/organizations/${orgId}/memberships`, token)).body.users as { user: { id: string; email: string } }[];
  const login = await ok('POST', '/api/v1/auth/login', '', { email, password, organizationId: orgId });
  return { id: users.find((member) => member.user.email === email)!.user.id, token: login.body.accessToken };
}

const waitFor = async (revision: number) =>
  expect((await ok('GET', `/api/v1/changes/wait?revision=${revision}&timeout=30s`, token)).body).toMatchObject({ reached: true });

beforeAll(async () => {
  cluster = clusterClients();
  namespace = await createTestNamespace('gated');
  const environment = await cofferEnvironment(namespace.name);
  ({ api, token } = await startApi(environment));
  operator = await startOperatorProcess(environment);
  await cluster.apply('secretsprojects', namespace.name, { kind: 'SecretsProject', metadata: { name: 'shop' }, spec: { name: 'Shop', slug } });
  projectId = (await cluster.waitReady('secretsprojects', namespace.name, 'shop')).status.projectId;
  orgId = (await ok('GET', `/api/v1/workspace/${projectId}`, token)).body.workspace.orgId;
  await putSecret(api, token, prod(), 'GATED', 'v1');
  await putSecret(api, token, dev(), 'OPEN', 'a');
  for (const [name, env] of [
    ['guarded', 'prod'],
    ['open', 'dev'],
  ]) {
    await cluster.apply('integrations', namespace.name, {
      kind: 'Integration',
      metadata: { name },
      spec: { projectRef: { name: 'shop' }, environment: env, secretPath: '/', target: { name: `${name}-secrets` } },
    });
  }
  await cluster.waitForData(namespace.name, 'guarded-secrets', { GATED: 'v1' }, 'the protected environment synced');
  await cluster.waitForData(namespace.name, 'open-secrets', { OPEN: 'a' }, 'the open environment synced');
}, 180_000);

afterAll(async () => {
  for (const process of [operator, api]) if (process) await stopCoffer(process);
  await namespace?.cleanup();
});

describe('change control in the cluster', () => {
  test('a change request leaves the Secret as it was until it is merged; the merge reaches it', async () => {
    const committer = await projectUser('committer@example.com', 'member');
    const approver = await projectUser('approver@example.com', 'admin');
    await ok('POST', '/api/v1/secret-approvals', token, {
      workspaceId: projectId,
      name: 'prod gate',
      environment: 'prod',
      secretPath: '/**',
      approvers: [{ id: approver.id }],
      approvals: 1,
    });
    const proposed = await ok('PATCH', '/api/v3/secrets/raw/GATED', committer.token, { workspaceId: projectId, environment: 'prod', secretPath: '/', secretValue: 'v2' });
    const requestId: string = proposed.body.approval.id;

    // a later write in another synced place reaches its Secret: the operator has seen everything committed since
    await waitFor(await putSecret(api, token, dev(), 'OPEN', 'b'));
    expect(await cluster.secretData(namespace.name, 'open-secrets')).toEqual({ OPEN: 'b' });
    expect(await cluster.secretData(namespace.name, 'guarded-secrets')).toEqual({ GATED: 'v1' });

    await ok('POST', `/api/v1/secret-approval-requests/${requestId}/review`, approver.token, { status: 'approved' });
    const merged = await ok('POST', `/api/v1/secret-approval-requests/${requestId}/merge`, approver.token, {});
    await waitFor(Number(merged.headers.get('coffer-revision')));
    expect(await cluster.secretData(namespace.name, 'guarded-secrets')).toEqual({ GATED: 'v2' });
  });

  test('a restore to an earlier revision reaches the Secret', async () => {
    const before = await putSecret(api, token, dev(), 'OPEN', 'c');
    await putSecret(api, token, dev(), 'OPEN', 'd');
    await putSecret(api, token, dev(), 'EXTRA', 'e');
    const restored = await ok('POST', `/api/v1/workspace/${projectId}/secrets/restore`, token, { environment: 'dev', secretPath: '/', revision: before });
    await waitFor(Number(restored.headers.get('coffer-revision')));
    expect(await cluster.secretData(namespace.name, 'open-secrets')).toEqual({ OPEN: 'c' });
  });
});
