import type { Actor } from '../../actor/actor.ts';
import { runInCacheRequestScope } from '../../caches/cache-versions.ts';
import { type ChangeRecord, LISTING_METADATA_KINDS } from '../../changes/change-feed.ts';
import { ChangeSubscriber } from '../../changes/change-subscriber.ts';
import { installationIdOf } from '../../installation/installation-service.ts';
import { findSingleOrganization } from '../../orgs/org-lookup.ts';
import type { Services } from '../../app/container.ts';
import type {
  Change,
  ChangeStream,
  CofferPort,
  FolderRef,
  ImportLocation,
  ImportsPort,
  IntegrationRecord,
  IntegrationsPort,
  Project,
  ProjectsPort,
  SecretImport,
  SecretListing,
  SecretSource,
  SecretsPort,
} from './coffer-port.ts';

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
export async function connectInProcess(services: Services, options: InProcessOptions): Promise<CofferPort | undefined> {
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
  };
}

async function operatorActor(services: Services, options: InProcessOptions): Promise<Actor | undefined> {
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

/** The change feed; the operator's own integration-record writes are recorded quietly (no wake-up) and marked as its own. */
function changeStream(services: Services): ChangeStream {
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
    ownWrite: record.kind === 'integration' && changes.isQuiet(record.revision),
  });
  return {
    latestRevision: () => changes.latestRevision(services.db),
    async subscribe(after, onChanges, onError) {
      const subscriber = new ChangeSubscriber(database, changes, { after, onChanges: (records) => onChanges(records.map(toChange)), onError });
      await subscriber.start();
      return subscriber;
    },
    isOwnWrite: (revision) => changes.recordedQuietly(revision),
  };
}

function projectsPort(services: Services, actor: Actor): ProjectsPort {
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
    async environmentBySlug(projectId, slug) {
      const { id, name } = await services.lookups.requireEnvironment(services.db, projectId, slug);
      return { id, slug, name };
    },
  };
}

function importsPort(services: Services, actor: Actor): ImportsPort {
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

function integrationsPort(services: Services, actor: Actor): IntegrationsPort {
  const { integrations } = services;
  const toRecord = (response: { id: string; isActive: boolean; envId: string; secretPath: string }): IntegrationRecord => ({
    id: response.id,
    isActive: response.isActive,
    environmentId: response.envId,
    secretPath: response.secretPath,
  });
  return {
    upsert: async (integration) => toRecord(await integrations.upsertManaged(actor, integration)),
    recordSyncResult: (integrationId, result) => integrations.recordSyncResult(integrationId, result),
    recordReloadResult: (integrationId, reloadedRevision) => integrations.recordReloadResult(integrationId, reloadedRevision),
    delete: (cluster, managedBy) => integrations.deleteManaged(actor, managedBy, cluster),
    get: async (integrationId) => toRecord(await integrations.getById(actor, integrationId)),
  };
}

function secretsPort(services: Services, actor: Actor): SecretsPort {
  return {
    // one listing is one request to the caches: the versions are read once, when it starts (caches/README.md)
    list: (source, options) => runInCacheRequestScope({}, () => listSecretsForOperator(services, actor, source, options)),
  };
}

/**
 * A source's shared secrets, imports and every folder read, as an operator syncs them (in process, and, `answered`,
 * for an operator in another cluster through /api/v1/operator/secrets: then only the folders the caller may read).
 */
export async function listSecretsForOperator(
  services: Services,
  actor: Actor,
  source: SecretSource,
  options: { fresh?: boolean; answered?: boolean } = {},
): Promise<SecretListing> {
  const dependencies = new Set<string>();
  const listing = await services.secretReader.list(actor, {
    workspaceId: source.projectId,
    environment: source.environment,
    secretPath: source.path,
    recursive: source.recursive,
    includeImports: source.includeImports,
    expandSecretReferences: true,
    dependencies,
    importedTags: true,
    fresh: options.fresh ?? false,
  });
  // the reader names each folder "<environment id>:<path>" whose content reached the listing (places the caller
  // may read, and what those import), the listed environment's own first; an answer (to an operator in another
  // cluster) names only those its caller may read (its stream shows no other's changes); a recursive listing may
  // have read none
  const places = options.answered ? await services.secretReader.readablePlaces(actor, source.projectId, dependencies) : [...dependencies];
  const reads = places.map(toFolderRef);
  const environmentId = reads[0]?.environmentId ?? (await services.lookups.requireEnvironment(services.db, source.projectId, source.environment)).id;
  return {
    secrets: listing.secrets
      .filter((secret) => secret.type === 'shared')
      .map((secret) => ({ key: secret.secretKey, value: secret.secretValue, path: secret.secretPath, tags: secret.tags.map((tag) => tag.slug) })),
    imports: (listing.imports ?? []).map((group) => ({
      environment: group.environment,
      path: group.secretPath,
      secrets: group.secrets.map((secret) => ({ key: secret.secretKey, value: secret.secretValue, tags: secret.tags.map((tag) => tag.slug) })),
    })),
    environmentId,
    reads,
  };
}

function toFolderRef(read: string): FolderRef {
  const separator = read.indexOf(':');
  return { environmentId: read.slice(0, separator), path: read.slice(separator + 1) };
}
