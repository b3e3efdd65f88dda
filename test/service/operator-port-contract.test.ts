import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { Change, Claimant, CofferPort, ManagedIntegration } from '../../src/operator/port/coffer-port.ts';
import { connectInProcess, OPERATOR_IDENTITY_NAME } from '../../src/operator/port/in-process.ts';
import { connectHttp } from '../../src/remote/http-port.ts';
import { ServerConnection } from '../../src/remote/server-connection.ts';
import { TokenKeeper } from '../../src/remote/token-keeper.ts';
import { type AccessFixture, accessFixture } from '../support/access-fixture.ts';
import { waitUntil } from '../support/event-stream.ts';
import { startTestApp, type TestApp } from '../support/test-app.ts';

/**
 * The operator port's contract (src/operator/port/coffer-port.ts): the same cases against both
 * implementations, in process (over the services) and over HTTP (src/remote/, against this app on a real
 * socket), as the same machine identity of the same cluster. Where the two differ on purpose, the
 * difference is a named decision below (README "Operators in other clusters", docs/threat-model.md
 * "The operator port"), asserted per implementation; everything else must be equal.
 */

const CLUSTER = 'contract-cluster';
const VERSION = '0.0.0-contract';

/** The differences between the implementations, each a documented decision. */
interface Decisions {
  /** An integration-record write of the operator's own is marked so in the stream (in process only: the server does not tell a client which writes were its own). */
  marksOwnWrites: boolean;
  /** The stream carries changes of every organization's projects (in process: the database's log) or only those the identity may read (HTTP). */
  streamsOtherOrganizations: boolean;
}

interface Implementation {
  name: 'in-process' | 'http';
  port: CofferPort;
  decisions: Decisions;
}

const app: TestApp = await startTestApp();
let fx: AccessFixture;
let operatorId: string;
let foreignToken: string;
let foreignProjectId: string;
const implementations: Implementation[] = [];
const closers: (() => Promise<void>)[] = [];

beforeAll(async () => {
  fx = await accessFixture(app, 'port-contract');
  const inProcess = await connectInProcess(app.services, { version: VERSION, clusterName: CLUSTER });
  if (!inProcess) throw new Error('no organization to act in');
  const identity = await app.database.db.selectFrom('identities').select('id').where('name', '=', OPERATOR_IDENTITY_NAME).executeTakeFirstOrThrow();
  operatorId = identity.id;

  // the same identity over HTTP: bound to the same cluster, logged in with universal auth, on a real socket
  await fx.bindToCluster(operatorId, CLUSTER);
  const credentials = await fx.universalAuth(operatorId);
  await app.app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = app.app.server.address() as AddressInfo;
  const server = new ServerConnection({ url: `http://127.0.0.1:${port}`, userAgent: `k8-operator/${VERSION} (cluster ${CLUSTER})` });
  const tokens = new TokenKeeper(server, async () => ({ clientId: credentials.clientId, clientSecret: credentials.clientSecret }));
  closers.push(
    async () => tokens.stop(),
    () => server.close(),
  );
  const overHttp = await connectHttp(server, tokens, { clusterName: CLUSTER });

  implementations.push(
    { name: 'in-process', port: inProcess, decisions: { marksOwnWrites: true, streamsOtherOrganizations: true } },
    { name: 'http', port: overHttp, decisions: { marksOwnWrites: false, streamsOtherOrganizations: false } },
  );

  // a second organization on the same server, with a project of its own
  foreignToken = await fx.foreignAdmin('port-contract-foreign');
  const foreign = await app.request('POST', '/api/v2/workspace', { token: foreignToken, body: { projectName: 'Foreign', slug: 'port-contract-foreign' } });
  if (foreign.status !== 200) throw new Error(JSON.stringify(foreign.body));
  foreignProjectId = foreign.body.project.id;
});
afterAll(async () => {
  for (const close of closers) await close();
  await app?.close();
});

/** A failure as the contract states it: the API's status and specific code. */
async function refusal(call: Promise<unknown>): Promise<{ statusCode: number; code: string }> {
  const error = await call.then(
    () => undefined,
    (thrown: unknown) => thrown as { statusCode: number; code: string },
  );
  if (!error) throw new Error('the call succeeded where the contract refuses it');
  return { statusCode: error.statusCode, code: error.code };
}

function claimantOf(implementation: Implementation, name: string): Claimant {
  return { cluster: CLUSTER, namespace: `ns-${implementation.name}`, name, uid: `uid-${implementation.name}-${name}` };
}

/** A project this implementation declares for one case. */
async function declared(implementation: Implementation, name: string) {
  const claimant = claimantOf(implementation, name);
  const project = await implementation.port.projects.declare(claimant, { slug: `${name}-${implementation.name}`, name: `${name} ${implementation.name}` });
  return { claimant, project };
}

/** The record of Integration `resource` in `namespace`, syncing dev:/ of the project into Secret `<resource>-secrets`. */
function managedIntegration(namespace: string, resource: string, projectId: string): ManagedIntegration {
  return {
    managedBy: `${namespace}/${resource}`,
    cluster: CLUSTER,
    projectId,
    environment: 'dev',
    secretPath: '/',
    app: `${resource}-secrets`,
    owner: namespace,
    targetEnvironment: namespace,
    metadata: { cluster: CLUSTER, namespace, name: resource },
    reloads: false,
  };
}

async function writeSecret(projectId: string, environment: string, secretPath: string, key: string, value: string, token = fx.token) {
  const written = await app.request('POST', `/api/v3/secrets/raw/${key}`, { token, body: { workspaceId: projectId, environment, secretPath, secretValue: value } });
  if (written.status !== 200) throw new Error(JSON.stringify(written.body));
}

/** The port's change stream followed from its newest revision: what it delivers, and its errors. */
async function following(port: CofferPort) {
  const received: Change[] = [];
  const errors: unknown[] = [];
  const subscription = await port.changes.subscribe(
    await port.changes.latestRevision(),
    async (changes) => {
      received.push(...changes);
    },
    (error) => errors.push(error),
  );
  return { received, errors, subscription };
}

describe.each(['in-process', 'http'] as const)('the operator port, %s', (name) => {
  const use = () => implementations.find((implementation) => implementation.name === name)!;

  test('the installation is the database behind the server', async () => {
    const installation = await app.database.db.selectFrom('installation').select('id').executeTakeFirstOrThrow();
    expect(use().port.installationId).toBe(installation.id);
  });

  test('a SecretsProject declares a project: found by its slug, usable from its namespace only, released with the project it created', async () => {
    const { port } = use();
    const { claimant, project } = await declared(use(), 'declared');
    expect(project).toEqual({
      id: expect.any(String),
      slug: `declared-${name}`,
      name: `declared ${name}`,
      autoCapitalization: expect.any(Boolean),
      environments: expect.arrayContaining([expect.objectContaining({ slug: 'dev' })]),
    });
    expect(await port.projects.declare(claimant, { slug: project.slug, name: project.name })).toEqual(project);
    expect(await port.projects.get(project.id)).toEqual(project);
    expect(await port.projects.claimantOfSlug(CLUSTER, project.slug)).toEqual(claimant);
    expect(await port.projects.claimantOfSlug(CLUSTER, 'nobody-declares-this')).toBeUndefined();
    expect(await port.projects.authorizeUse({ ...claimant, allowedNamespaces: [] }, { cluster: CLUSTER, namespace: claimant.namespace })).toEqual({
      projectId: project.id,
      slug: project.slug,
    });
    expect(await refusal(port.projects.authorizeUse({ ...claimant, allowedNamespaces: [] }, { cluster: CLUSTER, namespace: 'elsewhere' }))).toEqual({
      statusCode: 403,
      code: 'Forbidden',
    });
    await port.projects.release(claimant, true);
    expect(await port.projects.claimantOfSlug(CLUSTER, project.slug)).toBeUndefined();
    expect(await refusal(port.projects.get(project.id))).toEqual({ statusCode: 404, code: 'ProjectNotFound' });
  });

  test('environments: created, found by slug and by id, renamed; an unknown slug is 404', async () => {
    const { port } = use();
    const { project } = await declared(use(), 'environments');
    await port.projects.createEnvironment(project.id, { name: 'QA', slug: 'qa' });
    const qa = await port.projects.environmentBySlug(project.id, 'qa');
    expect(qa).toEqual({ id: expect.any(String), slug: 'qa', name: 'QA' });
    expect(await port.projects.environment(project.id, qa.id)).toEqual({ ...qa, position: expect.any(Number) });
    await port.projects.updateEnvironment(project.id, qa.id, { name: 'Quality' });
    expect(await port.projects.environmentBySlug(project.id, 'qa')).toEqual({ ...qa, name: 'Quality' });
    expect(await refusal(port.projects.environmentBySlug(project.id, 'nowhere'))).toEqual({ statusCode: 404, code: 'NotFound' });
    expect(await port.projects.permissions(project.id)).toEqual(expect.arrayContaining([{ subject: 'secrets', actions: expect.arrayContaining(['read']) }]));
  });

  test("another organization's project is not found by any call (its environments neither)", async () => {
    const { port } = use();
    const notFound = { statusCode: 404, code: 'ProjectNotFound' };
    expect(await refusal(port.projects.get(foreignProjectId))).toEqual(notFound);
    expect(await refusal(port.projects.environmentBySlug(foreignProjectId, 'dev'))).toEqual(notFound);
    expect(await refusal(port.projects.permissions(foreignProjectId))).toEqual(notFound);
    expect(await refusal(port.imports.list({ projectId: foreignProjectId, environment: 'dev', path: '/' }))).toEqual(notFound);
    const source = { projectId: foreignProjectId, environment: 'dev', path: '/', recursive: false, includeImports: true };
    expect(await refusal(port.secrets.list(source))).toEqual(notFound);
  });

  test('secret imports: created, listed, moved, deleted', async () => {
    const { port } = use();
    const { project } = await declared(use(), 'imports');
    const location = { projectId: project.id, environment: 'dev', path: '/' };
    const created = await port.imports.create(location, { environment: 'staging', path: '/' });
    expect(created).toEqual({ id: expect.any(String), position: 1, source: { environment: 'staging', path: '/' } });
    expect(await port.imports.list(location)).toEqual([created]);
    expect(await port.imports.get(created.id)).toEqual(created);
    const moved = await port.imports.update(created.id, location, { environment: 'prod' });
    expect(moved).toEqual({ ...created, source: { environment: 'prod', path: '/' } });
    await port.imports.delete(created.id, location);
    expect(await port.imports.list(location)).toEqual([]);
  });

  test("an Integration's record: kept, its sync and reload recorded, dropped", async () => {
    const { port } = use();
    const { project } = await declared(use(), 'records');
    const integration = managedIntegration(`ns-${name}`, 'app', project.id);
    const record = await port.integrations.upsert(integration);
    const dev = await port.projects.environmentBySlug(project.id, 'dev');
    expect(record).toEqual({ id: expect.any(String), isActive: true, environmentId: dev.id, secretPath: '/' });
    expect(await port.integrations.upsert(integration)).toEqual(record);
    expect(await port.integrations.get(record.id)).toEqual(record);

    const revision = await port.changes.latestRevision();
    const namespace = integration.managedBy.split('/')[0]!;
    const targetKeys = {
      carried: [{ environment: 'dev', path: '/', keys: [{ key: 'DB_PASSWORD' }, { key: 'TOKEN', as: 'API_TOKEN' }] }],
      templated: 0,
      carriedTruncated: false,
      readers: [{ kind: 'Deployment' as const, namespace, name: 'api', keys: ['DB_PASSWORD'] }],
      readersTruncated: false,
    };
    await port.integrations.recordSyncResult(record.id, {
      isSynced: true,
      syncMessage: null,
      syncedRevision: revision,
      places: [{ environmentId: dev.id, path: '/', recursive: false }],
      targetKeys,
    });
    const reported = () => app.database.db.selectFrom('integrationTargetKeys').select('report').where('integrationId', '=', record.id).executeTakeFirstOrThrow();
    expect((await reported()).report).toEqual(targetKeys);
    // a reader of another namespace is none of this Integration's: refused, the stored report stays
    const foreignReader = { ...targetKeys, readers: [{ ...targetKeys.readers[0]!, namespace: 'elsewhere' }] };
    expect(await refusal(port.integrations.recordSyncResult(record.id, { isSynced: true, syncMessage: null, targetKeys: foreignReader }))).toEqual({
      statusCode: 403,
      code: 'WorkloadNotInNamespace',
    });
    expect((await reported()).report).toEqual(targetKeys);
    const rolling = [{ kind: 'Deployment' as const, namespace, name: 'api' }];
    await port.integrations.recordReloadResult(record.id, { reloadedRevision: revision, rolling });
    const stored = await app.database.db
      .selectFrom('integrations')
      .select(['isSynced', 'syncedRevision', 'reloadedRevision', 'rollingWorkloads'])
      .where('id', '=', record.id)
      .executeTakeFirstOrThrow();
    expect({ ...stored, syncedRevision: Number(stored.syncedRevision), reloadedRevision: Number(stored.reloadedRevision) }).toEqual({
      isSynced: true,
      syncedRevision: revision,
      reloadedRevision: revision,
      rollingWorkloads: rolling,
    });
    expect(await refusal(port.integrations.recordReloadResult(record.id, { reloadedRevision: revision + 1_000_000 }))).toEqual({
      statusCode: 400,
      code: 'RevisionNotCommitted',
    });
    // a workload of another namespace is none of this Integration's: refused, the stored list stays
    const elsewhere = [{ kind: 'Deployment' as const, namespace: 'elsewhere', name: 'api' }];
    expect(await refusal(port.integrations.recordReloadResult(record.id, { reloadedRevision: revision, rolling: elsewhere }))).toEqual({
      statusCode: 403,
      code: 'WorkloadNotInNamespace',
    });
    await port.integrations.recordReloadResult(record.id, { reloadedRevision: revision });
    const kept = await app.database.db.selectFrom('integrations').select('rollingWorkloads').where('id', '=', record.id).executeTakeFirstOrThrow();
    expect(kept.rollingWorkloads).toEqual(rolling);

    await port.integrations.delete(CLUSTER, integration.managedBy);
    expect(await refusal(port.integrations.get(record.id))).toMatchObject({ statusCode: 404 });
  });

  test('the records of its cluster are listed by name, one namespace at a time, and a dropped one is no longer listed', async () => {
    const { port } = use();
    const { project } = await declared(use(), 'listed');
    const namespace = `ns-${name}`;
    for (const resource of ['listed-b', 'listed-a']) await port.integrations.upsert(managedIntegration(namespace, resource, project.id));
    const listed = await port.integrations.listManaged({ namespace });
    expect(listed.next).toBeNull();
    expect(listed.managedBy).toEqual(expect.arrayContaining([`${namespace}/listed-a`, `${namespace}/listed-b`]));
    expect(listed.managedBy.every((managedBy) => managedBy.startsWith(`${namespace}/`))).toBe(true);
    expect((await port.integrations.listManaged({ namespace, after: `${namespace}/listed-a` })).managedBy).not.toContain(`${namespace}/listed-a`);
    await port.integrations.delete(CLUSTER, `${namespace}/listed-b`);
    expect((await port.integrations.listManaged({ namespace })).managedBy).not.toContain(`${namespace}/listed-b`);
    expect((await port.integrations.listManaged({ namespace: 'ns-nobody' })).managedBy).toEqual([]);
  });

  // A resync after a restart reads at the installation's newest revision and sends the report of its target's keys
  // again (the operator remembers the last one only while it leads): a result that says what the record says, at a
  // revision only changes that alter no place (another record, here) came before, writes nothing; the record keeps
  // the revision it had, at which its target is as current (the revision barrier waits for no such change).
  test('a sync result that moves only past changes altering nothing it reads leaves the record as it is; one past a secret change, or with another report, is written', async () => {
    const { port } = use();
    const { project } = await declared(use(), 'resync');
    const integration = managedIntegration(`ns-${name}`, 'resynced', project.id);
    const record = await port.integrations.upsert(integration);
    const dev = await port.projects.environmentBySlug(project.id, 'dev');
    const places = [{ environmentId: dev.id, path: '/', recursive: false }];
    const report = (key: string) => ({
      carried: [{ environment: 'dev', path: '/', keys: [{ key }] }],
      templated: 0,
      carriedTruncated: false,
      readers: null,
      readersTruncated: false,
    });
    const stored = () =>
      app.database.db
        .selectFrom('integrations')
        .leftJoin('integrationTargetKeys', 'integrationTargetKeys.integrationId', 'integrations.id')
        .select(['syncedRevision', 'report'])
        .where('id', '=', record.id)
        .executeTakeFirstOrThrow();
    const syncedAt = async (revision: number, key = 'FIRST') => {
      await port.integrations.recordSyncResult(record.id, { isSynced: true, syncMessage: null, syncedRevision: revision, places, targetKeys: report(key) });
      const { syncedRevision, report: kept } = await stored();
      return { syncedRevision: Number(syncedRevision), key: (kept as ReturnType<typeof report>).carried[0]!.keys[0]!.key };
    };
    const first = await port.changes.latestRevision();
    expect(await syncedAt(first)).toEqual({ syncedRevision: first, key: 'FIRST' });

    await port.integrations.upsert(managedIntegration(`ns-${name}`, 'neighbour', project.id));
    const afterRecord = await port.changes.latestRevision();
    expect(afterRecord).toBeGreaterThan(first);
    expect(await syncedAt(afterRecord)).toEqual({ syncedRevision: first, key: 'FIRST' });
    expect(await syncedAt(afterRecord, 'SECOND')).toEqual({ syncedRevision: afterRecord, key: 'SECOND' });

    await writeSecret(project.id, 'dev', '/', 'CHANGED', 'value');
    const afterSecret = await port.changes.latestRevision();
    expect(await syncedAt(afterSecret, 'SECOND')).toEqual({ syncedRevision: afterSecret, key: 'SECOND' });
  });

  test('a listing: own secrets with references expanded, imports in order, every folder read, audited as a k8-operator read', async () => {
    const { port } = use();
    const { project } = await declared(use(), 'listing');
    const environments = Object.fromEntries(project.environments.map((environment) => [environment.slug, environment.id]));
    await fx.call('POST', '/api/v1/folders', { workspaceId: project.id, environment: 'staging', path: '/', name: 'shared' });
    await writeSecret(project.id, 'staging', '/shared', 'SHARED', 'shared-value');
    await writeSecret(project.id, 'dev', '/', 'OWN', 'own-value');
    await writeSecret(project.id, 'dev', '/', 'REFERENCE', '${staging.shared.SHARED}');
    await port.imports.create({ projectId: project.id, environment: 'dev', path: '/' }, { environment: 'staging', path: '/shared' });
    const audited = () =>
      app.database.db
        .selectFrom('auditLogs')
        .select(['eventType', 'userAgentType'])
        .where('projectId', '=', project.id)
        .where('eventType', '=', 'get-secrets')
        .where('actor', '=', 'identity')
        .execute();
    const before = (await audited()).length;

    const listing = await port.secrets.list({ projectId: project.id, environment: 'dev', path: '/', recursive: false, includeImports: true });
    expect(listing.secrets).toEqual([
      { key: 'OWN', value: 'own-value', path: '/', tags: [] },
      { key: 'REFERENCE', value: 'shared-value', path: '/', tags: [] },
    ]);
    expect(listing.imports).toEqual([{ environment: 'staging', path: '/shared', secrets: [{ key: 'SHARED', value: 'shared-value', tags: [] }] }]);
    expect(listing.environmentId).toBe(environments.dev);
    expect(listing.reads).toEqual(
      expect.arrayContaining([
        { environmentId: environments.dev, path: '/' },
        { environmentId: environments.staging, path: '/shared' },
      ]),
    );
    const after = await audited();
    expect(after.length).toBe(before + 1);
    expect(after.at(-1)?.userAgentType).toBe('k8-operator');
    expect(await refusal(port.secrets.list({ projectId: project.id, environment: 'nowhere', path: '/', recursive: false, includeImports: true }))).toMatchObject({
      statusCode: 404,
    });
  });

  test('the change stream: each change after a revision once, in order; own record writes and other organizations as decided', async () => {
    const { port, decisions } = use();
    const { project } = await declared(use(), 'stream');
    const { received, errors, subscription } = await following(port);
    try {
      await writeSecret(foreignProjectId, 'dev', '/', `FOREIGN_${name.replace('-', '_').toUpperCase()}`, 'foreign-value', foreignToken);
      const record = await port.integrations.upsert({
        managedBy: `ns-${name}/streamed`,
        cluster: CLUSTER,
        projectId: project.id,
        environment: 'dev',
        secretPath: '/',
        app: 'streamed',
        owner: `ns-${name}`,
        targetEnvironment: `ns-${name}`,
        metadata: {},
        reloads: false,
      });
      // the positive event after the others: once it is here, everything committed before it was delivered
      await writeSecret(project.id, 'dev', '/', 'MARKER', 'marker-value');
      await waitUntil('the marker write on the stream', () => received.some((change) => change.kind === 'secret' && change.projectId === project.id));

      const revisions = received.map((change) => change.revision);
      expect(revisions).toEqual([...new Set(revisions)].sort((a, b) => a - b));
      expect(received.find((change) => change.kind === 'secret' && change.projectId === project.id)).toEqual({
        revision: expect.any(Number),
        committedAt: expect.any(Date),
        kind: 'secret',
        projectId: project.id,
        environmentId: project.environments.find((environment) => environment.slug === 'dev')!.id,
        environmentSlug: 'dev',
        secretPath: '/',
        altersSecrets: true,
        ownWrite: false,
      });
      const ownRecord = received.find((change) => change.kind === 'integration' && change.projectId === project.id);
      expect(ownRecord).toMatchObject({ altersSecrets: false, ownWrite: decisions.marksOwnWrites });
      expect(record.id).toEqual(expect.any(String));
      expect(received.some((change) => change.projectId === foreignProjectId)).toBe(decisions.streamsOtherOrganizations);
      expect(errors).toEqual([]);
    } finally {
      await subscription.stop();
    }
  });

  test('record upserts committed while the stream is busy with others are each marked as decided (a quiet write read before its answer came back is still its own)', async () => {
    const { port, decisions } = use();
    const { project } = await declared(use(), 'busy');
    const { project: noisy } = await declared(use(), 'busy-noise');
    const { received, subscription } = await following(port);
    try {
      // secret writes elsewhere wake the stream again and again while the upserts commit
      const upserts = Array.from({ length: 40 }, (_, index) => port.integrations.upsert(managedIntegration(`ns-${name}`, `busy-${index}`, project.id)));
      const noise = Array.from({ length: 40 }, (_, index) => writeSecret(noisy.id, 'dev', '/', `NOISE_${index}`, 'noise-value'));
      await Promise.all([...upserts, ...noise]);
      await writeSecret(project.id, 'dev', '/', 'AFTER_UPSERTS', 'after-value');
      await waitUntil('the later write on the stream', () => received.some((change) => change.kind === 'secret' && change.projectId === project.id));
      const records = received.filter((change) => change.kind === 'integration' && change.projectId === project.id);
      expect(records).toHaveLength(40);
      expect(records.filter((change) => change.ownWrite !== decisions.marksOwnWrites)).toEqual([]);
    } finally {
      await subscription.stop();
    }
  });

  test("a changed report of its target's keys is one integration change on the stream, marked as its own; the same report again commits none", async () => {
    const { port } = use();
    const { project } = await declared(use(), 'reports');
    const record = await port.integrations.upsert({
      managedBy: `ns-${name}/reporting`,
      cluster: CLUSTER,
      projectId: project.id,
      environment: 'dev',
      secretPath: '/',
      app: 'reporting',
      owner: `ns-${name}`,
      targetEnvironment: `ns-${name}`,
      metadata: {},
      reloads: false,
    });
    const { received, subscription } = await following(port);
    try {
      const report = {
        isSynced: true,
        syncMessage: null,
        targetKeys: {
          carried: [{ environment: 'dev', path: '/', keys: [{ key: 'REPORTED' }] }],
          templated: 0,
          carriedTruncated: false,
          readers: [{ kind: 'Deployment' as const, namespace: `ns-${name}`, name: 'reader', keys: ['REPORTED'] }],
          readersTruncated: false,
        },
      };
      await port.integrations.recordSyncResult(record.id, report);
      await port.integrations.recordSyncResult(record.id, report);
      // the positive event after both: once it is here, everything committed before it was delivered
      await writeSecret(project.id, 'dev', '/', 'AFTER_REPORTS', 'after-value');
      await waitUntil('the later write on the stream', () => received.some((change) => change.kind === 'secret' && change.projectId === project.id));
      const reports = received.filter((change) => change.kind === 'integration' && change.projectId === project.id);
      expect(reports).toEqual([expect.objectContaining({ environmentSlug: 'dev', secretPath: '/', altersSecrets: false, ownWrite: true })]);
      // delivered: no longer pending as its own
      expect(port.changes.isOwnWrite(reports[0]!.revision)).toBe(false);
    } finally {
      await subscription.stop();
    }
  });
});

test('both implementations were exercised', () => {
  expect(implementations.map((implementation) => implementation.name)).toEqual(['in-process', 'http']);
});
