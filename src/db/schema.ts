import type { ColumnType, Generated, Insertable, Selectable } from 'kysely';

/** Column types as Kysely sees them (camelCase; the CamelCasePlugin maps to snake_case). */
type Timestamp = ColumnType<Date, Date | string | undefined, Date | string>;
type Json = ColumnType<unknown, string, string>;

/** The version of each in-process cache, moved by the transactions that write its tables (caches/cache-versions.ts). */
export interface CacheVersionsTable {
  name: string;
  version: number;
}

export interface InstanceStateTable {
  id: number;
  bootstrappedAt: Generated<Date>;
}

export interface InstallationTable {
  id: Generated<string>;
  singleton: Generated<boolean>;
  rootKeyCheck: Buffer | null;
  rootKeyRotatedAt: Date | null;
  createdAt: Timestamp;
}

export interface LoginThrottlesTable {
  key: string;
  failures: Generated<number>;
  windowStartedAt: Date;
  lockouts: Generated<number>;
  lockedUntil: Date | null;
  lastFailureAt: Date;
}

export interface NamespaceGrantsTable {
  id: Generated<string>;
  projectId: string;
  cluster: string;
  namespace: string;
  origin: 'api' | 'created';
  grantedByType: 'user' | 'identity';
  grantedById: string;
  grantedByName: string;
  createdAt: Timestamp;
}
export type NamespaceGrant = Selectable<NamespaceGrantsTable>;

export interface ProjectClaimsTable {
  id: Generated<string>;
  projectId: string;
  orgId: string;
  cluster: string;
  namespace: string;
  name: string;
  resourceUid: string;
  createdProject: boolean;
  /** The identity (acting for `cluster`) that declared it. */
  claimedByIdentityId: string | null;
  claimedAt: Timestamp;
}
export type ProjectClaim = Selectable<ProjectClaimsTable>;

/** A Kubernetes cluster an organization admin registered; its bound identities act for it. */
export interface ClustersTable {
  id: Generated<string>;
  orgId: string;
  name: string;
  description: Generated<string>;
  createdAt: Timestamp;
}
export type Cluster = Selectable<ClustersTable>;

/** An identity that acts for a cluster (at most one). */
export interface ClusterIdentitiesTable {
  identityId: string;
  clusterId: string;
  createdAt: Timestamp;
}

export interface OrganizationsTable {
  id: Generated<string>;
  name: string;
  slug: string;
  /** Members sign in with the organization's single sign-on only (break-glass aside). */
  authEnforced: Generated<boolean>;
  /** Password sign-ins need a second factor. */
  enforceMfa: Generated<boolean>;
  createdAt: Timestamp;
  updatedAt: Timestamp;
}

export interface UsersTable {
  id: Generated<string>;
  email: string;
  username: string;
  firstName: string | null;
  lastName: string | null;
  passwordHash: string | null;
  createdAt: Timestamp;
  updatedAt: Timestamp;
}

export interface OrgMembershipsTable {
  id: Generated<string>;
  orgId: string;
  userId: string | null;
  role: string;
  status: Generated<string>;
  inviteEmail: string | null;
  inviteTokenDigest: Buffer | null;
  inviteExpiresAt: Date | null;
  createdAt: Timestamp;
  updatedAt: Timestamp;
}

export interface IdentitiesTable {
  id: Generated<string>;
  name: string;
  authMethod: string | null;
  createdAt: Timestamp;
  updatedAt: Timestamp;
}

export interface IdentityOrgMembershipsTable {
  id: Generated<string>;
  orgId: string;
  identityId: string;
  role: string;
  createdAt: Timestamp;
  updatedAt: Timestamp;
}

export interface IdentityAccessTokensTable {
  id: Generated<string>;
  identityId: string;
  authMethod: string;
  name: string | null;
  accessTokenTtl: Generated<number>;
  accessTokenMaxTtl: Generated<number>;
  accessTokenNumUses: Generated<number>;
  accessTokenNumUsesLimit: Generated<number>;
  accessTokenLastUsedAt: Date | null;
  accessTokenLastRenewedAt: Date | null;
  isAccessTokenRevoked: Generated<boolean>;
  identityUaClientSecretId: string | null;
  createdAt: Timestamp;
  updatedAt: Timestamp;
}

/** A trusted address range, normalised: `{ipAddress, type, prefix}`. */
export interface TrustedIp {
  ipAddress: string;
  type: 'ipv4' | 'ipv6';
  prefix: number;
}

export interface IdentityUniversalAuthsTable {
  id: Generated<string>;
  identityId: string;
  clientId: Generated<string>;
  accessTokenTtl: number;
  accessTokenMaxTtl: number;
  accessTokenNumUsesLimit: Generated<number>;
  clientSecretTrustedIps: ColumnType<TrustedIp[], string, string>;
  accessTokenTrustedIps: ColumnType<TrustedIp[], string, string>;
  createdAt: Timestamp;
  updatedAt: Timestamp;
}

export interface IdentityKubernetesAuthsTable {
  id: Generated<string>;
  identityId: string;
  kubernetesHost: string;
  caCert: string;
  encryptedTokenReviewerJwt: Buffer | null;
  allowedNamespaces: string;
  allowedNames: string;
  allowedAudience: string;
  accessTokenTtl: number;
  accessTokenMaxTtl: number;
  accessTokenNumUsesLimit: Generated<number>;
  accessTokenTrustedIps: ColumnType<TrustedIp[], string, string>;
  createdAt: Timestamp;
  updatedAt: Timestamp;
}

export interface IdentityJwtAuthsTable {
  id: Generated<string>;
  identityId: string;
  configurationType: 'jwks' | 'static';
  jwksUrl: string;
  jwksCaCert: string;
  publicKeys: ColumnType<string[], string, string>;
  boundIssuer: string;
  boundAudiences: string;
  boundClaims: ColumnType<Record<string, string>, string, string>;
  boundSubject: string;
  accessTokenTtl: number;
  accessTokenMaxTtl: number;
  accessTokenNumUsesLimit: Generated<number>;
  accessTokenTrustedIps: ColumnType<TrustedIp[], string, string>;
  createdAt: Timestamp;
  updatedAt: Timestamp;
}

export interface IdentityUaClientSecretsTable {
  id: Generated<string>;
  identityUaId: string;
  description: Generated<string>;
  clientSecretPrefix: string;
  clientSecretDigest: Buffer;
  clientSecretLastUsedAt: Date | null;
  clientSecretNumUses: Generated<number>;
  clientSecretNumUsesLimit: Generated<number>;
  clientSecretTtl: Generated<number>;
  isClientSecretRevoked: Generated<boolean>;
  createdAt: Timestamp;
  updatedAt: Timestamp;
}

export interface UserSessionsTable {
  id: Generated<string>;
  userId: string;
  orgId: string;
  expiresAt: Date;
  isRevoked: Generated<boolean>;
  /** `email` (password) or `oidc`. */
  authMethod: Generated<string>;
  ip: string | null;
  userAgent: string | null;
  createdAt: Timestamp;
  updatedAt: Timestamp;
}

/** When a session was last used (apart from user_sessions: recording a use moves no cache version). */
export interface UserSessionActivityTable {
  sessionId: string;
  lastUsedAt: Date;
  ip: string | null;
}

/** An organization's OIDC single sign-on. */
export interface OrgOidcConfigsTable {
  id: Generated<string>;
  orgId: string;
  issuer: string;
  clientId: string;
  encryptedClientSecret: Buffer;
  scopes: string;
  allowedEmailDomains: ColumnType<string[], string, string>;
  groupsClaim: string;
  groupMappings: ColumnType<unknown, string, string>;
  defaultOrgRole: string;
  isActive: Generated<boolean>;
  createdAt: Timestamp;
  updatedAt: Timestamp;
}
export type OrgOidcConfig = Selectable<OrgOidcConfigsTable>;

/** A sign-in under way, single use. */
export interface OidcLoginStatesTable {
  stateDigest: Buffer;
  orgId: string;
  nonce: string;
  encryptedCodeVerifier: Buffer;
  userAgent: string | null;
  expiresAt: Date;
  createdAt: Timestamp;
}

export interface UserTotpTable {
  userId: string;
  encryptedSecret: Buffer;
  confirmedAt: Date | null;
  lastUsedStep: number | null;
  createdAt: Timestamp;
}

export interface UserRecoveryCodesTable {
  id: Generated<string>;
  userId: string;
  codeDigest: Buffer;
  usedAt: Date | null;
}

export interface ProjectRolesTable {
  id: Generated<string>;
  projectId: string;
  name: string;
  slug: string;
  description: string | null;
  permissions: Json;
  createdAt: Timestamp;
  updatedAt: Timestamp;
}

export interface IdentityProjectAdditionalPrivilegesTable {
  id: Generated<string>;
  slug: string;
  identityProjectMembershipId: string;
  isTemporary: Generated<boolean>;
  temporaryMode: string | null;
  temporaryRange: string | null;
  temporaryAccessStartTime: Date | null;
  temporaryAccessEndTime: Date | null;
  permissions: Json;
  createdAt: Timestamp;
  updatedAt: Timestamp;
}

export interface ProjectsTable {
  id: Generated<string>;
  name: string;
  slug: string;
  autoCapitalization: Generated<boolean>;
  orgId: string;
  version: Generated<number>;
  upgradeStatus: string | null;
  pitVersionLimit: Generated<number>;
  kmsCertificateKeyId: string | null;
  auditLogsRetentionDays: number | null;
  encryptedDataKey: Buffer | null;
  createdAt: Timestamp;
  updatedAt: Timestamp;
}

export interface ProjectEnvironmentsTable {
  id: Generated<string>;
  name: string;
  slug: string;
  position: number;
  projectId: string;
  createdAt: Timestamp;
  updatedAt: Timestamp;
}

export interface SecretFoldersTable {
  id: Generated<string>;
  name: string;
  version: Generated<number>;
  envId: string;
  parentId: string | null;
  isReserved: Generated<boolean>;
  createdAt: Timestamp;
  updatedAt: Timestamp;
  /** The creating transaction (txid_current()); null for folders made before folder history was kept. */
  xact: ColumnType<number | null, number | undefined, number | null>;
}

export interface ProjectMembershipsTable {
  id: Generated<string>;
  projectId: string;
  userId: string;
  createdAt: Timestamp;
  updatedAt: Timestamp;
}

export interface IdentityProjectMembershipsTable {
  id: Generated<string>;
  projectId: string;
  identityId: string;
  createdAt: Timestamp;
  updatedAt: Timestamp;
}

export interface ProjectMembershipRolesTable {
  id: Generated<string>;
  projectMembershipId: string | null;
  identityProjectMembershipId: string | null;
  role: string;
  customRoleId: string | null;
  isTemporary: Generated<boolean>;
  temporaryMode: string | null;
  temporaryRange: string | null;
  temporaryAccessStartTime: Date | null;
  temporaryAccessEndTime: Date | null;
  /** Given by a single sign-on group mapping: taken away at a sign-in where the mapping no longer applies. */
  grantedBySso: Generated<boolean>;
  createdAt: Timestamp;
  updatedAt: Timestamp;
}

export interface AuditLogsTable {
  id: Generated<string>;
  actor: string;
  actorMetadata: Json;
  ipAddress: string | null;
  eventType: string;
  eventMetadata: Json;
  userAgent: string | null;
  userAgentType: string | null;
  expiresAt: Date | null;
  orgId: string | null;
  projectId: string | null;
  projectName: string | null;
  createdAt: Timestamp;
  updatedAt: Timestamp;
  /** The writing transaction and the order of insertion: an audit log stream's cursor (migration 0024). */
  xact: Generated<number>;
  sequence: Generated<number>;
}

export interface ChangeLogTable {
  revision: Generated<number>;
  projectId: string;
  environmentId: string | null;
  environmentSlug: string | null;
  secretPath: string | null;
  kind: string;
  /** Kind `rotation`: {rotation, phase}. */
  rotation: ColumnType<unknown, string | undefined, string>;
  createdAt: Timestamp;
  /** The transaction that recorded it (txid_current()). */
  xact: Generated<number>;
}

export interface SecretsTable {
  id: string;
  folderId: string;
  type: 'shared' | 'personal';
  userId: string | null;
  key: string;
  version: Generated<number>;
  encryptedValue: Buffer;
  encryptedComment: Buffer | null;
  skipMultilineEncoding: Generated<boolean>;
  reminderNote: string | null;
  reminderRepeatDays: number | null;
  metadata: Json | null;
  createdAt: Timestamp;
  updatedAt: Timestamp;
}

export interface SecretVersionsTable {
  id: Generated<string>;
  secretId: string;
  folderId: string;
  version: number;
  type: 'shared' | 'personal';
  userId: string | null;
  key: string;
  encryptedValue: Buffer;
  encryptedComment: Buffer | null;
  skipMultilineEncoding: boolean;
  reminderNote: string | null;
  reminderRepeatDays: number | null;
  metadata: Json | null;
  tagIds: ColumnType<string[], string[] | undefined, string[]>;
  createdAt: Timestamp;
  /** The writing transaction (txid_current()); null for versions written before history was kept. */
  xact: ColumnType<number | null, number | undefined, number | null>;
}

/** A shared secret's deletion, by any path (a trigger on `secrets` writes it). */
export interface SecretDeletionsTable {
  secretId: string;
  folderId: string;
  version: number;
  xact: Generated<number>;
  createdAt: Timestamp;
}

/** A deleted folder, with its path then (a trigger on `secret_folders` writes it); its secret history keeps its id. */
export interface DeletedFoldersTable {
  folderId: string;
  envId: string;
  path: string;
  createdXact: number | null;
  xact: Generated<number>;
  createdAt: Timestamp;
}

export interface WebhooksTable {
  id: Generated<string>;
  projectId: string;
  environmentId: string;
  secretPath: string;
  url: string;
  encryptedSecretKey: Buffer;
  isDisabled: Generated<boolean>;
  consecutiveFailures: Generated<number>;
  cursorRevision: number;
  nextAttemptAt: Timestamp;
  leaseUntil: Date | null;
  lastStatus: 'success' | 'failed' | null;
  lastRunErrorMessage: string | null;
  createdAt: Timestamp;
  updatedAt: Timestamp;
}

export interface WebhookDeliveriesTable {
  id: Generated<string>;
  webhookId: string;
  revision: number;
  attempt: number;
  status: 'delivered' | 'failed';
  responseStatus: number | null;
  error: string | null;
  createdAt: Timestamp;
}

export interface AuditLogStreamsTable {
  id: Generated<string>;
  orgId: string;
  url: string;
  encryptedSecretKey: Buffer;
  encryptedHeaders: Buffer;
  headerKeys: string[];
  cursorXact: number;
  cursorSequence: number;
  lastDeliveredId: string | null;
  lastDeliveredAt: Date | null;
  consecutiveFailures: Generated<number>;
  lastError: string | null;
  lastErrorAt: Date | null;
  nextAttemptAt: Timestamp;
  leaseUntil: Date | null;
  createdAt: Timestamp;
  updatedAt: Timestamp;
}

export interface SecretApprovalPoliciesTable {
  id: Generated<string>;
  projectId: string;
  environmentId: string;
  name: string;
  secretPath: string;
  approvals: number;
  enforcementLevel: 'hard' | 'soft';
  createdAt: Timestamp;
  updatedAt: Timestamp;
}

export interface SecretApprovalPolicyApproversTable {
  policyId: string;
  userId: string;
}

export interface SecretApprovalRequestsTable {
  id: Generated<string>;
  projectId: string;
  policyId: string;
  folderId: string;
  slug: string;
  status: ColumnType<'open' | 'closed', 'open' | 'closed' | undefined, 'open' | 'closed'>;
  hasMerged: Generated<boolean>;
  committerUserId: string;
  statusChangedByUserId: string | null;
  bypassReason: string | null;
  conflicts: ColumnType<unknown, string | undefined, string>;
  mergedXact: number | null;
  createdAt: Timestamp;
  updatedAt: Timestamp;
}

export interface SecretApprovalRequestSecretsTable {
  id: Generated<string>;
  requestId: string;
  op: 'create' | 'update' | 'delete';
  secretKey: string;
  newSecretKey: string | null;
  secretId: string | null;
  secretVersion: number | null;
  encryptedValue: Buffer | null;
  encryptedComment: Buffer | null;
  skipMultilineEncoding: boolean | null;
  createdAt: Timestamp;
}

export interface SecretApprovalRequestReviewsTable {
  requestId: string;
  reviewerUserId: string;
  status: 'approved' | 'rejected';
  createdAt: Timestamp;
  updatedAt: Timestamp;
}

export interface SecretTagsTable {
  id: Generated<string>;
  projectId: string;
  slug: string;
  color: string | null;
  createdBy: string | null;
  createdByActorType: Generated<string>;
  createdAt: Timestamp;
  updatedAt: Timestamp;
}

export interface SecretTagLinksTable {
  secretId: string;
  tagId: string;
}

export interface SecretImportsTable {
  id: Generated<string>;
  folderId: string;
  version: Generated<number>;
  importEnv: string;
  importPath: string;
  position: number;
  isReplication: Generated<boolean>;
  createdAt: Timestamp;
  updatedAt: Timestamp;
}

export interface IntegrationAuthsTable {
  id: Generated<string>;
  projectId: string;
  integration: string;
  teamId: string | null;
  url: string | null;
  namespace: string | null;
  accountId: string | null;
  metadata: Json | null;
  encryptedAccess: Buffer | null;
  encryptedAccessId: Buffer | null;
  encryptedRefresh: Buffer | null;
  encryptedAwsAssumeIamRoleArn: Buffer | null;
  accessExpiresAt: Date | null;
  createdAt: Timestamp;
  updatedAt: Timestamp;
}

export interface IntegrationsTable {
  id: Generated<string>;
  integrationAuthId: string;
  envId: string;
  integration: string;
  isActive: Generated<boolean>;
  secretPath: Generated<string>;
  url: string | null;
  app: string | null;
  appId: string | null;
  targetEnvironment: string | null;
  targetEnvironmentId: string | null;
  targetService: string | null;
  targetServiceId: string | null;
  owner: string | null;
  path: string | null;
  region: string | null;
  scope: string | null;
  metadata: ColumnType<unknown, string | undefined, string>;
  managedBy: string | null;
  /** The cluster of the Integration resource that keeps this record (with managedBy). */
  cluster: string | null;
  /** The organization of that cluster (with managedBy). */
  clusterOrgId: string | null;
  isSynced: boolean | null;
  syncMessage: string | null;
  syncedRevision: number | null;
  /** What the last sync read (JSON: [{environmentId, path, recursive}]); null before the first. */
  readPlaces: ColumnType<unknown, string | undefined, string>;
  /** The Integration rolls workloads: the revision barrier waits for reloadedRevision too. */
  reloads: Generated<boolean>;
  reloadedRevision: number | null;
  /** The workloads it reloads whose rollout has not finished, as its operator last reported (JSON: [{kind, namespace, name}]). */
  rollingWorkloads: ColumnType<unknown, string | undefined, string>;
  lastUsed: Date | null;
  createdAt: Timestamp;
  updatedAt: Timestamp;
}

/** What an Integration's operator last reported of its target's keys and the workloads reading them (JSON: TargetKeys, src/integrations/target-keys.ts). */
export interface IntegrationTargetKeysTable {
  integrationId: string;
  report: ColumnType<unknown, string, string>;
  updatedAt: Timestamp;
}

export interface SchemaMigrationsTable {
  name: string;
  appliedAt: Timestamp;
}

/** A connection to a server Coffer acts on (a PostgreSQL server a rotation changes passwords on); credentials sealed with the project key. */
export interface AppConnectionsTable {
  id: Generated<string>;
  projectId: string;
  name: string;
  description: string | null;
  app: string;
  method: string;
  encryptedCredentials: Buffer;
  version: Generated<number>;
  createdAt: Timestamp;
  updatedAt: Timestamp;
}
export type AppConnection = Selectable<AppConnectionsTable>;

/** A secret rotation: PostgreSQL credentials or a generated secret, with its schedule and the state of its runs. */
export interface SecretRotationsTable {
  id: Generated<string>;
  projectId: string;
  environmentId: string;
  folderId: string;
  secretPath: string;
  type: string;
  name: string;
  description: string | null;
  connectionId: string | null;
  parameters: Json;
  secretsMapping: Json;
  isAutoRotationEnabled: boolean;
  rotationInterval: number;
  rotateAtUtc: Json;
  activeIndex: Generated<number>;
  encryptedGeneratedCredentials: Buffer | null;
  pendingIndex: number | null;
  encryptedPendingCredentials: Buffer | null;
  rotationStatus: string;
  lastRotationMessage: string | null;
  lastRotationAttemptedAt: Date | null;
  lastRotatedAt: Date | null;
  nextRotationAt: Date | null;
  isLastRotationManual: Generated<boolean>;
  consumerWaitMinutes: Generated<number>;
  waitingFor: Json | null;
  waitingSince: Date | null;
  runClaimedUntil: Date | null;
  createdAt: Timestamp;
  updatedAt: Timestamp;
}
export type SecretRotation = Selectable<SecretRotationsTable>;
export interface DynamicSecretsTable {
  id: Generated<string>;
  projectId: string;
  folderId: string;
  name: string;
  type: string;
  version: Generated<number>;
  defaultTtl: string;
  maxTtl: string | null;
  encryptedInputs: Buffer;
  createdAt: Generated<Date>;
  updatedAt: Generated<Date>;
}

export interface DynamicSecretLeasesTable {
  id: Generated<string>;
  dynamicSecretId: string;
  projectId: string;
  externalEntityId: string;
  version: Generated<number>;
  expireAt: Timestamp;
  status: string | null;
  statusDetails: string | null;
  createdBy: string;
  revokeClaimedUntil: Timestamp | null;
  createdAt: Timestamp;
  updatedAt: Generated<Date>;
}

export interface DB {
  appConnections: AppConnectionsTable;
  secretRotations: SecretRotationsTable;
  cacheVersions: CacheVersionsTable;
  instanceState: InstanceStateTable;
  installation: InstallationTable;
  loginThrottles: LoginThrottlesTable;
  namespaceGrants: NamespaceGrantsTable;
  projectClaims: ProjectClaimsTable;
  clusters: ClustersTable;
  clusterIdentities: ClusterIdentitiesTable;
  organizations: OrganizationsTable;
  users: UsersTable;
  orgMemberships: OrgMembershipsTable;
  identities: IdentitiesTable;
  identityOrgMemberships: IdentityOrgMembershipsTable;
  identityAccessTokens: IdentityAccessTokensTable;
  identityUniversalAuths: IdentityUniversalAuthsTable;
  identityUaClientSecrets: IdentityUaClientSecretsTable;
  identityKubernetesAuths: IdentityKubernetesAuthsTable;
  identityJwtAuths: IdentityJwtAuthsTable;
  userSessions: UserSessionsTable;
  userSessionActivity: UserSessionActivityTable;
  orgOidcConfigs: OrgOidcConfigsTable;
  oidcLoginStates: OidcLoginStatesTable;
  userTotp: UserTotpTable;
  userRecoveryCodes: UserRecoveryCodesTable;
  projectRoles: ProjectRolesTable;
  identityProjectAdditionalPrivileges: IdentityProjectAdditionalPrivilegesTable;
  projects: ProjectsTable;
  projectEnvironments: ProjectEnvironmentsTable;
  secretFolders: SecretFoldersTable;
  projectMemberships: ProjectMembershipsTable;
  identityProjectMemberships: IdentityProjectMembershipsTable;
  projectMembershipRoles: ProjectMembershipRolesTable;
  auditLogs: AuditLogsTable;
  changeLog: ChangeLogTable;
  secrets: SecretsTable;
  secretVersions: SecretVersionsTable;
  secretDeletions: SecretDeletionsTable;
  deletedFolders: DeletedFoldersTable;
  webhooks: WebhooksTable;
  webhookDeliveries: WebhookDeliveriesTable;
  auditLogStreams: AuditLogStreamsTable;
  secretApprovalPolicies: SecretApprovalPoliciesTable;
  secretApprovalPolicyApprovers: SecretApprovalPolicyApproversTable;
  secretApprovalRequests: SecretApprovalRequestsTable;
  secretApprovalRequestSecrets: SecretApprovalRequestSecretsTable;
  secretApprovalRequestReviews: SecretApprovalRequestReviewsTable;
  secretTags: SecretTagsTable;
  dynamicSecrets: DynamicSecretsTable;
  dynamicSecretLeases: DynamicSecretLeasesTable;
  secretTagLinks: SecretTagLinksTable;
  secretImports: SecretImportsTable;
  integrationAuths: IntegrationAuthsTable;
  integrations: IntegrationsTable;
  integrationTargetKeys: IntegrationTargetKeysTable;
  schemaMigrations: SchemaMigrationsTable;
}

export type Organization = Selectable<OrganizationsTable>;
export type User = Selectable<UsersTable>;
export type Identity = Selectable<IdentitiesTable>;
export type IdentityAccessToken = Selectable<IdentityAccessTokensTable>;
export type Project = Selectable<ProjectsTable>;
export type Environment = Selectable<ProjectEnvironmentsTable>;
export type Folder = Selectable<SecretFoldersTable>;
export type Secret = Selectable<SecretsTable>;
export type SecretVersion = Selectable<SecretVersionsTable>;
export type Webhook = Selectable<WebhooksTable>;
export type WebhookDelivery = Selectable<WebhookDeliveriesTable>;
export type AuditLogStream = Selectable<AuditLogStreamsTable>;
export type SecretApprovalPolicy = Selectable<SecretApprovalPoliciesTable>;
export type SecretApprovalRequest = Selectable<SecretApprovalRequestsTable>;
export type SecretApprovalRequestSecret = Selectable<SecretApprovalRequestSecretsTable>;
export type SecretTag = Selectable<SecretTagsTable>;
export type DynamicSecret = Selectable<DynamicSecretsTable>;
export type DynamicSecretLease = Selectable<DynamicSecretLeasesTable>;
export type SecretImport = Selectable<SecretImportsTable>;
export type IntegrationAuth = Selectable<IntegrationAuthsTable>;
export type Integration = Selectable<IntegrationsTable>;
export type IdentityUniversalAuth = Selectable<IdentityUniversalAuthsTable>;
export type IdentityUaClientSecret = Selectable<IdentityUaClientSecretsTable>;
export type IdentityKubernetesAuth = Selectable<IdentityKubernetesAuthsTable>;
export type IdentityJwtAuth = Selectable<IdentityJwtAuthsTable>;
export type UserSession = Selectable<UserSessionsTable>;
export type ProjectRole = Selectable<ProjectRolesTable>;
export type IdentityAdditionalPrivilege = Selectable<IdentityProjectAdditionalPrivilegesTable>;
export type ProjectMembershipRole = Selectable<ProjectMembershipRolesTable>;
export type NewAuditLog = Insertable<AuditLogsTable>;
