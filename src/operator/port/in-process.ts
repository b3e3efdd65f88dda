import { AsyncLocalStorage } from 'node:async_hooks';
import type { Actor } from '../../actor/actor.ts';
import { runInCacheRequestScope } from '../../caches/cache-versions.ts';
import { type ChangeRecord, LISTING_METADATA_KINDS } from '../../changes/change-feed.ts';
import { ChangeSubscriber } from '../../changes/change-subscriber.ts';
import { NotFoundError } from '../../errors.ts';
import { MANAGED_PAGE_MAX } from '../../integrations/integration-schema.ts';
import type { IntegrationWithTargetKeys } from '../../integrations/integration-service.ts';
import { installationIdOf } from '../../installation/installation-service.ts';
import { findSingleOrganization } from '../../orgs/org-lookup.ts';
import type { Services } from '../../app/container.ts';
import type {
  Change,
  ChangeStream,
  CofferPort,
  ImportLocation,
  ImportsPort,
  IntegrationRecord,
  IntegrationsPort,
  Project,
  ProjectsPort,
  SecretImport,
  SecretsPort,
} from './coffer-port.ts';

/**
 * What the in-process port uses of the services: the ones the API routes of the same calls use (so a call
 * is checked and audited alike in process and over HTTP, test/service/operator-port-contract.test.ts), and
 * the database only to subscribe to the change log and to read the installation id and the organization.
 */
export type OperatorServices = Pick<
  Services,
  'db' | 'database' | 'changes' | 'identities' | 'projectClaims' | 'projects' | 'environments' | 'imports' | 'integrations' | 'operatorListings'
>;

/** The machine identity the in-process operator acts as; its calls are audited as k8-operator. */
export const OPERATOR_IDENTITY_NAME = 'coffer-operator';

export interface InProcessOptions {
  /** Organization slug; the only organization when unset. */
  organization?: string;
  /** Coffer's version, for the User-Agent of the audit entries. */
  version: string;
  /** This installation's own cluster (COFFER_CLUSTER_NAME): the one the in-process operator acts for. */
  clusterName: string;
}

/**
 * The port over this process's services, as the operator identity. Undefined
 * while there is no organization to act in (the instance is not bootstrapped,
 * or COFFER_OPERATOR_ORG must name one of several).
 */
export async function connectInProcess(services: OperatorServices, options: InProcessOptions): Promise<CofferPort | undefined> {
  const actor = await operatorActor(services, options);
  if (!actor) return undefined;
  const installationId = await installationIdOf(services.db);
  return {
    installationId,
    changes: changeStream(services),
    projects: projectsPort(services, actor),
    imports: importsPort(services, actor),
    integrations: integrationsPort(services, actor),
    secrets: secretsPort(services, actor),
    asOneRequest: (work) => runInCacheRequestScope({}, () => reconcileRead.run({}, work)),
  };
}

async function operatorActor(services: OperatorServices, options: InProcessOptions): Promise<Actor | undefined> {
  const organization = await findSingleOrganization(services.db, options.organization);
  if (!organization) return undefined;
  const identity = await services.identities.ensureServiceIdentity(organization.id, OPERATOR_IDENTITY_NAME, 'admin');
  return {
    kind: 'identity',
    id: identity.id,
    name: identity.name,
    orgId: organization.id,
    orgRole: identity.role,
    tokenId: null,
    authMethod: 'service',
    cluster: options.clusterName,
    ip: null,
    userAgent: `k8-operator/${options.version}`,
    userAgentType: 'k8-operator',
  };
}

/** The change feed; the operator's own integration-record writes (quiet upserts, and reports of its targets' keys, which others hear at once) are marked as its own. */
function changeStream(services: OperatorServices): ChangeStream {
  const { changes, database } = services;
  const toChange = (record: ChangeRecord): Change => ({
    revision: record.revision,
    committedAt: record.createdAt,
    kind: record.kind,
    projectId: record.projectId,
    environmentId: record.environmentId,
    environmentSlug: record.environmentSlug,
    secretPath: record.secretPath,
    altersSecrets: !LISTING_METADATA_KINDS.has(record.kind),
    ownWrite: record.kind === 'integration' && changes.isOwnWrite(record.revision),
    ...(record.rotation ? { rotation: record.rotation } : {}),
  });
  return {
    // read with the cache versions: in a reconcile (asOneRequest) the one read every look-up of it compares with
    latestRevision: () => changes.newestRevision(services.db),
    async subscribe(after, onChanges, onError) {
      const deliver = async (records: ChangeRecord[]) => {
        // an own write's change (a quiet upsert, a report) can be read before its answer marks it own
        if (records.some((record) => record.kind === 'integration')) await changes.ownWritesSettled();
        await onChanges(records.map(toChange));
      };
      const subscriber = new ChangeSubscriber(database, changes, { after, onChanges: deliver, onError });
      await subscriber.start();
      return subscriber;
    },
    isOwnWrite: (revision) => changes.recordedAsOwn(revision),
  };
}

function projectsPort(services: OperatorServices, actor: Actor): ProjectsPort {
  const { projectClaims, projects, environments } = services;
  const get = async (projectId: string): Promise<Project> => {
    const { id, slug, name, autoCapitalization, environments: list } = await projects.get(actor, projectId);
    return { id, slug, name, autoCapitalization, environments: list.map(({ id, slug, name }) => ({ id, slug, name })) };
  };
  return {
    async declare(claimant, wanted) {
      const { projectId } = await projectClaims.declare(actor, claimant, wanted);
      return get(projectId);
    },
    async release(claimant, deleteProject) {
      await projectClaims.release(actor, claimant, deleteProject);
    },
    authorizeUse: (declaring, using) => projectClaims.authorizeUse(actor, declaring, using),
    claimantOfSlug: (cluster, slug) => projectClaims.claimantOfSlug(actor, cluster, slug),
    get,
    async update(projectId, changes) {
      await projects.update(actor, projectId, changes);
    },
    permissions: async (projectId) => (await projects.effectivePermissions(actor, projectId)).permissions,
    async environment(projectId, environmentId) {
      const { id, slug, name, position } = await environments.get(actor, environmentId, projectId);
      return { id, slug, name, position };
    },
    async createEnvironment(projectId, environment) {
      await environments.create(actor, projectId, environment);
    },
    async updateEnvironment(projectId, environmentId, changes) {
      await environments.update(actor, projectId, environmentId, changes);
    },
    // as over HTTP: the project as the operator may read it (its permission check), then the environment of the slug
    async environmentBySlug(projectId, slug) {
      const found = (await get(projectId)).environments.find((environment) => environment.slug === slug);
      if (!found) throw new NotFoundError(`Environment with slug '${slug}' in project '${projectId}' not found`);
      return found;
    },
  };
}

function importsPort(services: OperatorServices, actor: Actor): ImportsPort {
  const { imports } = services;
  const toImport = (response: { id: string; position: number; importPath: string; importEnv: { slug: string } }): SecretImport => ({
    id: response.id,
    position: response.position,
    source: { environment: response.importEnv.slug, path: response.importPath },
  });
  return {
    get: async (importId) => toImport(await imports.get(actor, importId)),
    list: async (location: ImportLocation) => (await imports.list(actor, location)).map(toImport),
    create: async (location, source) => toImport(await imports.create(actor, { ...location, source })),
    update: async (importId, location, changes) => toImport(await imports.update(actor, importId, { ...location, changes })),
    async delete(importId, location) {
      await imports.delete(actor, importId, location);
    },
  };
}

/**
 * The integration record a reconcile's upsert read (or inserted), for the one sync result it records next (taken
 * once; recordSyncResultAs uses it only for the same id): the reconcile of an Integration is its record's only
 * writer of what that decides on.
 */
const reconcileRead = new AsyncLocalStorage<{ record?: IntegrationWithTargetKeys }>();

function takeRead(): IntegrationWithTargetKeys | undefined {
  const slot = reconcileRead.getStore();
  const record = slot?.record;
  if (slot) slot.record = undefined;
  return record;
}

function integrationsPort(services: OperatorServices, actor: Actor): IntegrationsPort {
  const { integrations } = services;
  const toRecord = (response: { id: string; isActive: boolean; envId: string; secretPath: string }): IntegrationRecord => ({
    id: response.id,
    isActive: response.isActive,
    environmentId: response.envId,
    secretPath: response.secretPath,
  });
  return {
    async upsert(integration, options) {
      const { response, record } = await integrations.upsertManagedRecord(actor, integration, options);
      const slot = reconcileRead.getStore();
      if (slot) slot.record = record;
      return toRecord(response);
    },
    recordSyncResult: (integrationId, result) => integrations.recordSyncResultAs(actor, integrationId, result, takeRead()),
    recordReloadResult: (integrationId, result) => integrations.recordReloadResultAs(actor, integrationId, result),
    delete: (cluster, managedBy) => integrations.deleteManaged(actor, managedBy, cluster),
    listManaged: (page) => integrations.listManaged(actor, { ...page, limit: MANAGED_PAGE_MAX }),
    get: async (integrationId) => toRecord(await integrations.getById(actor, integrationId)),
  };
}

function secretsPort(services: OperatorServices, actor: Actor): SecretsPort {
  return {
    // one listing is one request to the caches: the versions are read once, when it starts (caches/README.md)
    list: (source, options) => runInCacheRequestScope({}, () => services.operatorListings.list(actor, source, options)),
  };
}
