import type { Dispatcher } from 'undici';
import { z } from 'zod';
import { LISTING_METADATA_KINDS } from '../changes/change-feed.ts';
import { WritesUnderWay } from '../changes/writes-under-way.ts';
import { AppError, NotFoundError } from '../errors.ts';
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
} from '../operator/port/coffer-port.ts';
import * as wire from '../wire/operator-wire.ts';
import { ChangeFollower, type StreamedChange } from './change-follower.ts';
import type { CallOptions, ServerConnection } from './server-connection.ts';
import type { TokenKeeper } from './token-keeper.ts';

/** A query string of the parameters given, an undefined one left out (URLSearchParams does the encoding). */
function query(params: Record<string, string | undefined>): string {
  return new URLSearchParams(Object.entries(params).filter((entry): entry is [string, string] => entry[1] !== undefined)).toString();
}

/** One authenticated JSON call: a token from the keeper, a new login after a 401; the answer parsed with its wire schema. */
type Call = <Answer extends z.ZodType = z.ZodUnknown>(
  method: Dispatcher.HttpMethod,
  path: string,
  options?: Omit<CallOptions<Answer>, 'token'>,
) => Promise<z.output<Answer>>;

export interface HttpPortOptions {
  /** This cluster's name: the one its Integration records and claims carry. */
  clusterName: string;
}

/**
 * The operator's port over Coffer's HTTP API, for an operator in another
 * cluster (`coffer operator --server`): every method one API call as the
 * operator's machine identity, and the change stream followed over
 * server-sent events, resumed by revision after every disconnect.
 */
export async function connectHttp(server: ServerConnection, tokens: TokenKeeper, options: HttpPortOptions): Promise<CofferPort> {
  const call: Call = (method, path, callOptions = {}) => tokens.withToken((token) => server.call(method, path, { ...callOptions, token }));
  const { installationId, cluster } = await call('GET', '/api/v1/operator/installation', { answer: wire.installationAnswer });
  if (cluster !== options.clusterName) {
    // the server keys everything by the cluster the credential is bound to: a different name here would only be refused call by call
    throw new AppError(
      403,
      'ClusterMismatch',
      cluster
        ? `this operator is configured as cluster '${options.clusterName}' (COFFER_CLUSTER_NAME), but its credential acts for cluster '${cluster}'`
        : `this operator's credential acts for no registered cluster: an organization admin registers '${options.clusterName}' and binds its identity (POST /api/v1/clusters, POST /api/v1/clusters/{clusterId}/identities)`,
    );
  }
  const own = new OwnReports();
  return {
    installationId,
    changes: changeStream(server, tokens, call, own),
    projects: projectsPort(call),
    imports: importsPort(call),
    integrations: integrationsPort(call, options.clusterName, own),
    secrets: secretsPort(call),
  };
}

/**
 * The changes this operator's own reports of its targets' keys committed (sync-result answers name their revision),
 * and the report calls under way: a change arriving before its call's answer waits for it, so it is known as its own.
 */
class OwnReports {
  readonly #revisions = new Set<number>();
  readonly #underWay = new WritesUnderWay();

  /** Runs a report call, keeping the revision its answer names. */
  track<T>(report: (onRevision: (revision: number) => void) => Promise<T>): Promise<T> {
    return this.#underWay.track(
      report((revision) => {
        this.#revisions.add(revision);
        // a change the stream never delivers (it restarted past it) is never taken: keep the newest 10,000
        while (this.#revisions.size > 10_000) this.#revisions.delete(this.#revisions.values().next().value!);
      }),
    );
  }

  /** Resolves once every report call under way now has been answered (or failed). */
  settled(): Promise<void> {
    return this.#underWay.settled();
  }

  /** Whether `revision` is one of these reports' changes, not delivered yet. */
  has(revision: number): boolean {
    return this.#revisions.has(revision);
  }

  /** has(), for the change being delivered: forgotten after. */
  take(revision: number): boolean {
    return this.#revisions.delete(revision);
  }
}

function changeStream(server: ServerConnection, tokens: TokenKeeper, call: Call, own: OwnReports): ChangeStream {
  const toChange = (change: StreamedChange): Change => ({
    revision: change.revision,
    committedAt: new Date(change.time),
    kind: change.kind,
    projectId: change.projectId,
    environmentId: change.environmentId,
    environmentSlug: change.environment,
    secretPath: change.secretPath,
    altersSecrets: !LISTING_METADATA_KINDS.has(change.kind),
    // its reports' changes it knows by their revision; its record upserts it cannot tell from others' (woken by them, it finds nothing to do)
    ownWrite: change.kind === 'integration' && own.take(change.revision),
    ...(change.rotation ? { rotation: change.rotation } : {}),
  });
  return {
    latestRevision: async () => (await call('GET', '/api/v1/operator/installation', { answer: wire.installationAnswer })).revision,
    async subscribe(after, onChanges, onError, hooks) {
      const follower = new ChangeFollower(server, tokens, after, {
        onChanges: async (changes) => {
          // a report's change can arrive before its call's answer names it
          if (changes.some((change) => change.kind === 'integration')) await own.settled();
          await onChanges(changes.map(toChange));
        },
        onReset: async () => hooks?.onReset?.(),
        onConnection: (connected, reason) => {
          if (!connected && reason !== 'stopped') onError(new Error(reason ?? 'the change stream was lost'));
          hooks?.onConnectionLost?.(!connected, reason);
        },
      });
      follower.start();
      return { stop: () => follower.stop() };
    },
    isOwnWrite: (revision) => own.has(revision),
  };
}

function projectsPort(call: Call): ProjectsPort {
  const get = async (projectId: string): Promise<Project> => {
    const { workspace } = await call('GET', `/api/v1/workspace/${encodeURIComponent(projectId)}`, { answer: wire.workspaceAnswer });
    return {
      id: workspace.id,
      slug: workspace.slug,
      name: workspace.name,
      autoCapitalization: workspace.autoCapitalization,
      environments: workspace.environments.map(({ id, slug, name }) => ({ id, slug, name })),
    };
  };
  return {
    async declare(claimant, wanted) {
      const { projectId } = await call('POST', '/api/v1/operator/project-claims', { body: { claimant, ...wanted }, answer: wire.declareClaimAnswer });
      return get(projectId);
    },
    async release(claimant, deleteProject) {
      await call('POST', '/api/v1/operator/project-claims/release', { body: { claimant, deleteProject }, answer: wire.releaseClaimAnswer });
    },
    authorizeUse: (declaring, using) => call('POST', '/api/v1/operator/project-claims/authorize-use', { body: { declaring, using }, answer: wire.authorizeUseAnswer }),
    async claimantOfSlug(cluster, slug) {
      try {
        return (await call('GET', `/api/v1/operator/project-claims?${query({ cluster, slug })}`, { answer: wire.claimantAnswer })).claimant;
      } catch (error) {
        if (error instanceof AppError && error.statusCode === 404) return undefined;
        throw error;
      }
    },
    get,
    async update(projectId, changes) {
      await call('PATCH', `/api/v1/workspace/${encodeURIComponent(projectId)}`, { body: changes });
    },
    async environment(projectId, environmentId) {
      const { environment } = await call('GET', `/api/v1/workspace/${encodeURIComponent(projectId)}/environments/${encodeURIComponent(environmentId)}`, {
        answer: wire.environmentAnswer,
      });
      return { id: environment.id, slug: environment.slug, name: environment.name, position: environment.position };
    },
    async createEnvironment(projectId, environment) {
      await call('POST', `/api/v1/workspace/${encodeURIComponent(projectId)}/environments`, { body: environment });
    },
    async updateEnvironment(projectId, environmentId, changes) {
      await call('PATCH', `/api/v1/workspace/${encodeURIComponent(projectId)}/environments/${encodeURIComponent(environmentId)}`, { body: changes });
    },
    permissions: async (projectId) =>
      (await call('GET', `/api/v1/workspace/${encodeURIComponent(projectId)}/effective-permissions`, { answer: wire.effectivePermissionsAnswer })).permissions,
    async environmentBySlug(projectId, slug) {
      const found = (await get(projectId)).environments.find((environment) => environment.slug === slug);
      if (!found) throw new NotFoundError(`Environment with slug '${slug}' in project '${projectId}' not found`);
      return found;
    },
  };
}

type ImportAnswer = z.infer<typeof wire.secretImportAnswer>['secretImport'];

function importsPort(call: Call): ImportsPort {
  const toImport = (answer: ImportAnswer): SecretImport => ({
    id: answer.id,
    position: answer.position,
    source: { environment: answer.importEnv.slug, path: answer.importPath },
  });
  const at = (location: ImportLocation) => ({ workspaceId: location.projectId, environment: location.environment, path: location.path });
  const url = (importId: string) => `/api/v1/secret-imports/${encodeURIComponent(importId)}`;
  return {
    get: async (importId) => toImport((await call('GET', url(importId), { answer: wire.secretImportAnswer })).secretImport),
    list: async (location) => (await call('GET', `/api/v1/secret-imports?${query(at(location))}`, { answer: wire.secretImportsAnswer })).secretImports.map(toImport),
    create: async (location, source) =>
      toImport((await call('POST', '/api/v1/secret-imports', { body: { ...at(location), import: source }, answer: wire.secretImportAnswer })).secretImport),
    update: async (importId, location, changes) =>
      toImport((await call('PATCH', url(importId), { body: { ...at(location), import: changes }, answer: wire.secretImportAnswer })).secretImport),
    async delete(importId, location) {
      await call('DELETE', url(importId), { body: at(location) });
    },
  };
}

function integrationsPort(call: Call, cluster: string, own: OwnReports): IntegrationsPort {
  const toRecord = ({ integration: answer }: z.infer<typeof wire.integrationAnswer>): IntegrationRecord => ({
    id: answer.id,
    isActive: answer.isActive,
    environmentId: answer.envId,
    secretPath: answer.secretPath,
  });
  return {
    upsert: async (integration) => toRecord(await call('PUT', '/api/v1/operator/integrations', { body: { ...integration, cluster }, answer: wire.integrationAnswer })),
    async recordSyncResult(integrationId, result) {
      const path = `/api/v1/operator/integrations/${encodeURIComponent(integrationId)}/sync-result`;
      await own.track((onRevision) => call('POST', path, { body: result, answer: wire.messageAnswer, onRevision }));
    },
    async recordReloadResult(integrationId, result) {
      await call('POST', `/api/v1/operator/integrations/${encodeURIComponent(integrationId)}/reload-result`, { body: result, answer: wire.messageAnswer });
    },
    async delete(recordCluster, managedBy) {
      await call('DELETE', `/api/v1/operator/integrations?${query({ cluster: recordCluster, managedBy })}`, { answer: wire.messageAnswer });
    },
    listManaged: (page) => call('GET', `/api/v1/operator/integrations?${query({ cluster, ...page })}`, { answer: wire.managedListAnswer }),
    get: async (integrationId) => toRecord(await call('GET', `/api/v1/integration/${encodeURIComponent(integrationId)}`, { answer: wire.integrationAnswer })),
  };
}

function secretsPort(call: Call): SecretsPort {
  return {
    list: (source, options) =>
      call(
        'GET',
        `/api/v1/operator/secrets?${query({
          projectId: source.projectId,
          environment: source.environment,
          secretPath: source.path,
          recursive: String(source.recursive),
          includeImports: String(source.includeImports),
          ...(options?.fresh ? { fresh: 'true' } : {}),
        })}`,
        { answer: wire.operatorListingAnswer },
      ),
  };
}
