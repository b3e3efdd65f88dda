import type { Services } from '../../app/container.ts';
import type { ZodApp } from '../zod-app.ts';
import { BadRequestError, NotFoundError } from '../../errors.ts';
import { installationSeenBy } from '../../installation/installation-view.ts';
import { MANAGED_PAGE_MAX } from '../../integrations/integration-schema.ts';
import {
  authorizeUseAnswer,
  authorizeUseBody,
  claimantAnswer,
  claimantQuery,
  declareClaimAnswer,
  declareClaimBody,
  deleteIntegrationQuery,
  installationAnswer,
  integrationAnswer,
  integrationParams,
  listManagedQuery,
  managedListAnswer,
  messageAnswer,
  operatorListingAnswer,
  operatorSecretsQuery,
  reloadResultBody,
  releaseClaimAnswer,
  releaseClaimBody,
  syncResultBody,
  upsertIntegrationBody,
} from '../../wire/operator-wire.ts';
import { changes, describeRoute, orgPermission, projectPermission, reads } from '../docs/operation-doc.ts';

/**
 * What an operator in another cluster (`coffer operator --server`) needs beyond the public API: the
 * project claims of its SecretsProjects, the integration records of its Integrations, and secret
 * listings that name every folder they read (for its dependency index). The in-process operator calls
 * the same services directly.
 */

const tags = ['Operator'];
const who =
  'Meant for the operator of another cluster (`coffer operator --server`), acting as its machine identity; its calls are audited as `k8-operator` when it sends `User-Agent: k8-operator/…`.';
/** The rule every cluster-keyed route follows (src/clusters/acting-cluster.ts). */
const acting =
  'The cluster is the one the credential is bound to (a registered cluster, `POST /api/v1/clusters/{clusterId}/identities`), never a request field: a caller bound to no cluster is refused (403 `ClusterNotBound`), and a `cluster` field naming another cluster is refused (403 `ClusterMismatch`); it may be left out.';
/** Examples the API reference shows (one project, cluster and namespace throughout). */
const PROJECT = '6f1c2a9e-4b7d-4e21-9a3c-1d5e8f0b7c42';
const ENVIRONMENT = '9e2b4d6f-8a1c-4e3f-b5d7-2c4e6a8b0d13';
const CLAIMANT = { cluster: 'cluster-b', namespace: 'shop', name: 'web-shop', uid: '0f3c9a7e-2d4b-4c1a-8e6f-5a7b9c1d3e24' };

export function operatorRoutes(app: ZodApp, services: Services): void {
  const { projectClaims, integrations } = services;
  app.get(
    '/api/v1/operator/installation',
    {
      schema: {
        tags,
        ...describeRoute({
          summary: 'The installation behind this server',
          description: `The installation (database) id, which the resources an operator manages carry, and the newest change-log revision among the projects the caller may read: where an operator that lists now follows the change stream from. The installation's own newest revision, which counts every project's and organization's writes, is never answered. ${who}`,
          permission:
            "A member or admin of the caller's organization (the `no-access` organization role is refused, 403), or a caller that may read the secrets of some project (any built-in project role but `no-access`).",
          effects: reads(),
        }),
        response: {
          200: installationAnswer.meta({ examples: [{ installationId: '7c1e9a3b-5d2f-4e8a-9b6c-1f3a5c7e9b20', revision: 42, cluster: 'cluster-b' }] }),
        },
      },
    },
    async (request) => ({ ...(await installationSeenBy(services, request.actor)), cluster: request.actor.cluster ?? null }),
  );

  app.post(
    '/api/v1/operator/project-claims',
    {
      schema: {
        tags,
        ...describeRoute({
          summary: "Declare a SecretsProject's project",
          description: `The project a SecretsProject declares: the one it declared before, a new project, or an existing one its namespace holds a grant for (403 \`GrantMissing\`, \`ProjectClaimed\` otherwise). A project has one claimant per cluster; a claim is never taken over by another uid (403 \`ProjectClaimed\`), and a refused declaration takes nothing. ${acting} ${who}`,
          permission: orgPermission('create', 'workspace'),
          effects: changes('Creates the project (and the namespace grant of origin `created`) or records the claim.', 'create-project'),
          errors: [400],
        }),
        body: declareClaimBody.meta({ examples: [{ claimant: CLAIMANT, slug: 'web-shop', name: 'Web Shop' }] }),
        response: { 200: declareClaimAnswer.meta({ examples: [{ projectId: PROJECT, created: true }] }) },
      },
    },
    async (request) => projectClaims.declare(request.actor, request.body.claimant, { slug: request.body.slug, name: request.body.name }),
  );

  app.post(
    '/api/v1/operator/project-claims/release',
    {
      schema: {
        tags,
        ...describeRoute({
          summary: "Release a SecretsProject's claim",
          description: `Ends the claim of a deleted SecretsProject; with \`deleteProject\` also deletes the project, but only one this SecretsProject created. ${acting} ${who}`,
          permission: orgPermission('create', 'workspace'),
          effects: changes('Deletes the claim (and the project when asked and allowed).', 'delete-project'),
        }),
        body: releaseClaimBody.meta({ examples: [{ claimant: CLAIMANT, deleteProject: false }] }),
        response: { 200: releaseClaimAnswer },
      },
    },
    async (request) => ({ outcome: await projectClaims.release(request.actor, request.body.claimant, request.body.deleteProject) }),
  );

  app.post(
    '/api/v1/operator/project-claims/authorize-use',
    {
      schema: {
        tags,
        ...describeRoute({
          summary: 'May a namespace use a declared project',
          description: `The project a resource of \`using\` may read through the SecretsProject \`declaring\`: 403 with \`ProjectNotReady\`, \`GrantRevoked\` or \`Forbidden\` (and the call that grants it) when it may not. ${acting} ${who}`,
          permission: projectPermission('read', 'secrets'),
          effects: reads(),
        }),
        body: authorizeUseBody.meta({
          examples: [{ declaring: { ...CLAIMANT, allowedNamespaces: ['shop-staging'] }, using: { cluster: 'cluster-b', namespace: 'shop-staging' } }],
        }),
        response: { 200: authorizeUseAnswer.meta({ examples: [{ projectId: PROJECT, slug: 'web-shop' }] }) },
      },
    },
    async (request) => projectClaims.authorizeUse(request.actor, request.body.declaring, request.body.using),
  );

  app.get(
    '/api/v1/operator/project-claims',
    {
      schema: {
        tags,
        ...describeRoute({
          summary: 'Who declares a project',
          description: `The SecretsProject of a cluster that declares the project with this slug in the caller's organization, as the database records it (404 when none does). Who claimed what (the claimant's uid above all) is answered only to the operator of that cluster and to the project's admins; anyone else is told there is none (404). ${who}`,
          permission: 'The operator credential of that cluster, or a project admin (`create` on `namespace-grants`); 404 for anyone else.',
          effects: reads(),
        }),
        querystring: claimantQuery,
        response: { 200: claimantAnswer.meta({ examples: [{ claimant: CLAIMANT }] }) },
      },
    },
    async (request) => {
      const cluster = request.query.cluster ?? request.actor.cluster;
      if (cluster === undefined) throw new BadRequestError('Name the cluster: this credential acts for none', 'ClusterRequired');
      const found = await projectClaims.claimantOfSlug(request.actor, cluster, request.query.slug);
      if (!found) throw new NotFoundError(`No SecretsProject of cluster '${cluster}' declares project '${request.query.slug}'`);
      return { claimant: found };
    },
  );

  app.put(
    '/api/v1/operator/integrations',
    {
      schema: {
        tags,
        ...describeRoute({
          summary: "Keep an Integration resource's record",
          description: `Creates or updates the \`kubernetes\` integration record of an Integration resource, named by its cluster and \`<namespace>/<name>\`. A call that changes nothing writes nothing. ${acting} ${who}`,
          permission: `An operator credential bound to a registered cluster, with ${projectPermission('edit', 'integrations')} (\`create\` for a new record), and \`read\` on \`secrets\` at its environment and path.`,
          effects: changes('Creates or updates the integration record.', 'create-integration'),
        }),
        body: upsertIntegrationBody.meta({
          examples: [
            {
              cluster: 'cluster-b',
              managedBy: 'shop/app',
              projectId: PROJECT,
              environment: 'dev',
              secretPath: '/',
              app: 'app-secrets',
              owner: 'shop',
              targetEnvironment: 'shop',
              metadata: { cluster: 'cluster-b', namespace: 'shop', name: 'app' },
            },
          ],
        }),
        response: { 200: integrationAnswer },
      },
    },
    async (request) => ({ integration: await integrations.upsertManaged(request.actor, request.body) }),
  );

  app.get(
    '/api/v1/operator/integrations',
    {
      schema: {
        tags,
        ...describeRoute({
          summary: 'Name the Integration resources with a record',
          description: `The \`<namespace>/<name>\` of every Integration resource of the caller's cluster that has a record, in order, a page at a time: the operator compares them with the resources in its cluster and drops the records of those deleted while it was away. Names only. ${acting} ${who}`,
          permission: 'An operator credential bound to a registered cluster.',
          effects: reads(),
        }),
        querystring: listManagedQuery,
        response: { 200: managedListAnswer.meta({ examples: [{ managedBy: ['shop/app', 'shop/worker'], next: null }] }) },
      },
    },
    async (request) => {
      const { cluster, namespace, after, limit = MANAGED_PAGE_MAX } = request.query;
      return integrations.listManaged(request.actor, { cluster, namespace, after, limit });
    },
  );

  app.delete(
    '/api/v1/operator/integrations',
    {
      schema: {
        tags,
        ...describeRoute({
          summary: "Drop an Integration resource's record",
          description: `Deletes the integration record of a deleted Integration resource of the caller's cluster; nothing when there is none. ${acting} ${who}`,
          permission: `An operator credential bound to a registered cluster, with ${projectPermission('delete', 'integrations')}`,
          effects: changes('Deletes the integration record.', 'delete-integration'),
        }),
        querystring: deleteIntegrationQuery,
        response: { 200: messageAnswer },
      },
    },
    async (request) => {
      await integrations.deleteManaged(request.actor, request.query.managedBy, request.query.cluster);
      return { message: 'Deleted' };
    },
  );

  app.post(
    '/api/v1/operator/integrations/:integrationId/sync-result',
    {
      schema: {
        tags,
        ...describeRoute({
          summary: "Record a sync's outcome",
          description: `Stores what the last sync of an integration did (its state, message and the revision the Secret reflects) and, in \`targetKeys\`, which keys the Secret holds, from which folder, and which workloads of its namespace read which. Status text and names only, never a value. Only the operator of the cluster that keeps the record writes it (403 \`OperatorOnly\`: a project role is not enough), a revision above the newest committed one is refused (400 \`RevisionNotCommitted\`), and so is a place outside the integration's project or one the operator may not read (403 \`PlaceNotReadable\`, for the places read and the folders keys came from alike), and a workload outside the Integration resource's namespace (403 \`WorkloadNotInNamespace\`); the revision barrier believes nothing else. ${who}`,
          permission: 'The operator credential of the cluster whose Integration resource keeps the record (a capability of its cluster binding, not a project role).',
          effects:
            'Stores the outcome; no audit entry. No change either, except when `targetKeys` differs from the stored report: then one `integration` change at the record\'s source (place only, as any integration change), so that followers of the change stream (the console\'s "Where it goes") see which workloads read which key at once; an unchanged report writes nothing.',
        }),
        params: integrationParams,
        body: syncResultBody.meta({
          examples: [
            {
              isSynced: true,
              syncMessage: null,
              syncedRevision: 42,
              places: [{ environmentId: ENVIRONMENT, path: '/', recursive: false }],
              targetKeys: {
                carried: [{ environment: 'dev', path: '/', keys: [{ key: 'DATABASE_URL' }, { key: 'API_TOKEN', as: 'TOKEN' }] }],
                templated: 0,
                carriedTruncated: false,
                readers: [
                  { kind: 'Deployment', namespace: 'shop', name: 'api', keys: ['DATABASE_URL'] },
                  { kind: 'Deployment', namespace: 'shop', name: 'worker', keys: null },
                ],
                readersTruncated: false,
              },
            },
          ],
        }),
        response: { 200: messageAnswer },
      },
    },
    async (request) => {
      await integrations.recordSyncResultAs(request.actor, request.params.integrationId, request.body);
      return { message: 'Recorded' };
    },
  );

  app.post(
    '/api/v1/operator/integrations/:integrationId/reload-result',
    {
      schema: {
        tags,
        ...describeRoute({
          summary: "Record a workload reload's progress",
          description: `Stores the newest revision whose changes the workload reload of an integration has dealt with (the workloads that consume what changed were rolled, or found current), and the workloads whose rollout has not finished. As sync-result: only the operator of the record's cluster (403 \`OperatorOnly\`), only a committed revision (400 \`RevisionNotCommitted\`), only workloads in the Integration resource's namespace (403 \`WorkloadNotInNamespace\`). ${who}`,
          permission: 'The operator credential of the cluster whose Integration resource keeps the record.',
          effects: "Stores the revision; no audit entry and no change (the record's settings did not change).",
        }),
        params: integrationParams,
        body: reloadResultBody.meta({ examples: [{ reloadedRevision: 42, rolling: [{ kind: 'Deployment', namespace: 'shop', name: 'api' }] }] }),
        response: { 200: messageAnswer },
      },
    },
    async (request) => {
      await integrations.recordReloadResultAs(request.actor, request.params.integrationId, request.body);
      return { message: 'Recorded' };
    },
  );

  app.get(
    '/api/v1/operator/secrets',
    {
      schema: {
        tags,
        ...describeRoute({
          summary: 'What an Integration syncs',
          description: `The shared secrets of an environment and path (below it with \`recursive\`), imports grouped in position order, references expanded, and every folder the listing read that the caller may read (its own, imported and referenced ones, by environment id): what the operator keeps a Secret of and which changes concern it. An import the caller may not read is left out with everything it imports; no folder it may not read is named. ${who}`,
          permission: projectPermission('read', 'secrets', 'path'),
          effects: reads('get-secrets'),
        }),
        querystring: operatorSecretsQuery,
        response: {
          200: operatorListingAnswer.meta({
            examples: [
              {
                secrets: [{ key: 'DATABASE_PASSWORD', value: 's3cr3t', path: '/', tags: ['backend'] }],
                imports: [{ environment: 'dev', path: '/shared', secrets: [{ key: 'LOG_LEVEL', value: 'info', tags: [] }] }],
                environmentId: ENVIRONMENT,
                reads: [
                  { environmentId: ENVIRONMENT, path: '/' },
                  { environmentId: ENVIRONMENT, path: '/shared' },
                ],
              },
            ],
          }),
        },
      },
    },
    async (request) => {
      const { projectId, environment, secretPath, recursive, includeImports, fresh } = request.query;
      const listing = await services.operatorListings.list(request.actor, { projectId, environment, path: secretPath, recursive, includeImports }, { fresh });
      // a listing authenticated just before the caller's token was revoked may hold writes made after: not sent
      await services.auth.assertStillValid(request.actor);
      return listing;
    },
  );
}
