import type { PermissionNeed } from '../../permissions/operator-role.ts';
import type { ChangeKind, RotationNote } from '../../changes/change-feed.ts';
export type { RotationNote } from '../../changes/change-feed.ts';
import type { ReadPlace } from '../../changes/read-places.ts';
import type { ReloadResult } from '../../integrations/workload-rollout.ts';
import type { TargetKeys } from '../../integrations/target-keys.ts';
import type { OperatorListing, SecretSource } from '../../secrets/operator-listing.ts';

/**
 * The operator's port to Coffer: every call the controllers make, and nothing
 * else. Two implementations are meant to exist: in-process, over the services
 * (in-process.ts), and over HTTP for an operator in another cluster. Each
 * method is therefore one API call (named beside it), and changes arrive as a
 * stream resumable by revision. Domain types cross it, never a database handle
 * or an HTTP body. The port acts as the operator's own machine identity, so no
 * method takes an actor.
 *
 * Failures are `AppError`s (src/errors.ts) with the statusCode, error code and
 * message the API would answer with: 404 for what does not exist, 403 with a
 * code (GrantMissing, GrantRevoked, Forbidden, ProjectClaimed, ProjectNotReady)
 * for what the operator may not use, other 4xx for a request refused, 503
 * when Coffer cannot answer now (its server unreachable, its database away).
 * Anything else is a plain Error, to be retried.
 */
export interface CofferPort {
  /** The installation (database) behind the port: what the resources it manages carry. */
  readonly installationId: string;
  readonly changes: ChangeStream;
  readonly projects: ProjectsPort;
  readonly imports: ImportsPort;
  readonly integrations: IntegrationsPort;
  readonly secrets: SecretsPort;
  /**
   * Runs the calls of one reconcile as one request would run them: in process, Coffer's cache versions and the
   * newest revision are read once for all of them (caches/README.md), not once per look-up. Over HTTP every
   * call is a request of its own, so the HTTP port has none.
   */
  readonly asOneRequest?: <T>(work: () => Promise<T>) => Promise<T>;
}

/** A change-feed revision: every committed change that can alter what a place resolves to has one, in commit order. */
export type Revision = number;

/** One committed change, as the stream delivers it. */
export interface Change {
  revision: Revision;
  /** When it was committed (its transaction's time in Coffer). */
  committedAt: Date;
  kind: ChangeKind;
  projectId: string;
  environmentId: string | null;
  environmentSlug: string | null;
  secretPath: string | null;
  /** False for changes that never alter the keys and values a place resolves to (integration records, tags, grants). */
  altersSecrets: boolean;
  /** An integration-record write this operator made itself (it needs no wake-up for it). */
  ownWrite: boolean;
  /** Kind `rotation`: the secret rotation writing at the place, and the phase it reached (names only). */
  rotation?: RotationNote;
}

export interface ChangeSubscription {
  stop(): Promise<void>;
}

/** What a subscriber hears besides changes (over HTTP; in-process the database is the stream). */
export interface StreamHooks {
  /** The revision to resume after is not in Coffer's log (another or a restored database): read everything again. */
  onReset?(): void;
  /** The connection to Coffer was lost (true) or is back (false): the resources should say so, then catch up. */
  onConnectionLost?(lost: boolean, reason?: string): void;
}

/** The change feed (HTTP: a server-sent event stream resumed from the last revision). */
export interface ChangeStream {
  /** The newest committed revision. */
  latestRevision(): Promise<Revision>;
  /**
   * Delivers every change after `after`, in order and once; `onChanges` resolving moves the stream on.
   * Read errors are reported and retried; nothing committed meanwhile is missed.
   */
  subscribe(after: Revision, onChanges: (changes: Change[]) => Promise<void>, onError: (error: unknown) => void, hooks?: StreamHooks): Promise<ChangeSubscription>;
  /** Whether `revision` is one of this operator's own integration-record writes not yet delivered by the stream. */
  isOwnWrite(revision: Revision): boolean;
}

/** Who declares a project: a SecretsProject, by cluster, namespace, name and uid. */
export interface Claimant {
  cluster: string;
  namespace: string;
  name: string;
  uid: string;
}

export interface ProjectEnvironment {
  id: string;
  slug: string;
  name: string;
}

export interface Project {
  id: string;
  slug: string;
  name: string;
  autoCapitalization: boolean;
  environments: ProjectEnvironment[];
}

export interface ProjectsPort {
  /** The project `claimant` declares: its claim, a new project, or an existing one its namespace has a grant for (project claims). */
  declare(claimant: Claimant, wanted: { slug: string; name: string }): Promise<Project>;
  /** The claim ends; the project is deleted too when `deleteProject` and the claimant created it. */
  release(claimant: Claimant, deleteProject: boolean): Promise<void>;
  /** The project a resource in `namespace` may read through the SecretsProject `declaring` (403 with a code when it may not). */
  authorizeUse(declaring: Claimant & { allowedNamespaces: string[] }, using: { cluster: string; namespace: string }): Promise<{ projectId: string; slug: string }>;
  /** The SecretsProject of `cluster` that declares the project with this slug, as the database records it. */
  claimantOfSlug(cluster: string, slug: string): Promise<Claimant | undefined>;
  /** GET /api/v1/workspace/{id} */
  get(projectId: string): Promise<Project>;
  /** PATCH /api/v1/workspace/{id} */
  update(projectId: string, changes: { name?: string; autoCapitalization?: boolean }): Promise<void>;
  /** GET /api/v1/workspace/{id}/environments/{envId}: with its position. */
  environment(projectId: string, environmentId: string): Promise<ProjectEnvironment & { position: number }>;
  /** POST /api/v1/workspace/{id}/environments */
  createEnvironment(projectId: string, environment: { name: string; slug: string; position?: number }): Promise<void>;
  /** PATCH /api/v1/workspace/{id}/environments/{envId} */
  updateEnvironment(projectId: string, environmentId: string, changes: { name: string; position?: number }): Promise<void>;
  /** The environment of this slug (404 when the project has none). */
  environmentBySlug(projectId: string, slug: string): Promise<ProjectEnvironment>;
  /** GET /api/v1/workspace/{id}/effective-permissions: what the operator's own identity may do in the project. */
  permissions(projectId: string): Promise<PermissionNeed[]>;
}

/** Where an import lives: a folder of a project's environment. */
export interface ImportLocation {
  projectId: string;
  environment: string;
  path: string;
}

export interface SecretImport {
  id: string;
  position: number;
  /** The imported environment (slug) and path. */
  source: { environment: string; path: string };
}

/** The secret imports API (/api/v1/secret-imports). */
export interface ImportsPort {
  get(importId: string): Promise<SecretImport>;
  list(location: ImportLocation): Promise<SecretImport[]>;
  create(location: ImportLocation, source: { environment: string; path: string }): Promise<SecretImport>;
  update(importId: string, location: ImportLocation, changes: { environment?: string; path?: string; position?: number }): Promise<SecretImport>;
  delete(importId: string, location: ImportLocation): Promise<void>;
}

/** The integration record of one Integration resource (an integration of type kubernetes). */
export interface ManagedIntegration {
  /** "<namespace>/<name>" of the Integration resource. */
  managedBy: string;
  /** The cluster the resource lives in, as its operator names itself. */
  cluster: string;
  projectId: string;
  environment: string;
  secretPath: string;
  /** The target Secret's name. */
  app: string;
  owner: string;
  targetEnvironment: string;
  /** Left as stored when undefined (true on creation). */
  isActive?: boolean;
  /** Where the resource lives: installation, cluster, namespace, name, uid. */
  metadata: Record<string, string>;
  /** It rolls workloads (spec.reload): the revision barrier waits for its reload too. */
  reloads: boolean;
}

export interface IntegrationRecord {
  id: string;
  isActive: boolean;
  environmentId: string;
  secretPath: string;
}

export interface IntegrationsPort {
  /**
   * Creates or updates the record of `integration.managedBy`. `expectNew`: the resource's status names no record yet,
   * so its insert is tried first (a hint, for the in-process port: a record that exists is found and updated alike).
   */
  upsert(integration: ManagedIntegration, options?: { expectNew?: boolean }): Promise<IntegrationRecord>;
  /**
   * What the last sync did (and, after a successful one, every place it read and what its target's keys are and
   * who reads them; a failed one leaves the revision reached as it was); status text and names only, never a value.
   */
  recordSyncResult(
    integrationId: string,
    result: { isSynced: boolean; syncMessage: string | null; syncedRevision?: Revision | null; places?: ReadPlace[]; targetKeys?: TargetKeys | null },
  ): Promise<void>;
  /** The newest revision whose changes the workload reload has dealt with (rolled, or found current), and the workloads whose rollout has not finished. */
  recordReloadResult(integrationId: string, result: ReloadResult): Promise<void>;
  /** Deletes the record of `managedBy` in `cluster`, if any. */
  delete(cluster: string, managedBy: string): Promise<void>;
  /**
   * GET /api/v1/operator/integrations: the `<namespace>/<name>` of this cluster's Integration resources that have a
   * record (of `namespace` only, when given), in order, one page after `after`; `next` starts the following page.
   */
  listManaged(page: { namespace?: string; after?: string }): Promise<{ managedBy: string[]; next: string | null }>;
  /** GET /api/v1/integration/{id} */
  get(integrationId: string): Promise<IntegrationRecord>;
}

export type { FolderRef } from '../../secrets/folder-ref.ts';
export type { ReloadResult, WorkloadRef } from '../../integrations/workload-rollout.ts';
export type { TargetKeys } from '../../integrations/target-keys.ts';
export type { ImportedSecrets, SecretSource, SourcedSecret } from '../../secrets/operator-listing.ts';
/** What an operator syncs from one source: produced by the secrets domain (OperatorListings), in process and over HTTP alike. */
export type SecretListing = OperatorListing;

export interface SecretsPort {
  /**
   * GET /api/v3/secrets/raw with expandSecretReferences (audited as a get-secrets read by the operator);
   * `fresh` (coffer.dev/force-sync) reads past the server's listings shared by revision.
   */
  list(source: SecretSource, options?: { fresh?: boolean }): Promise<SecretListing>;
}
