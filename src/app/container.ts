import { HELD_REQUEST_LIMITS, type HeldRequestKind, type HeldRequestLimit } from '../actor/caller-quota.ts';
import { AuditExportService } from '../audit/audit-export-service.ts';
import { AuditService } from '../audit/audit-service.ts';
import { AuthService } from '../auth/auth-service.ts';
import { AccessWatch } from '../caches/access-watch.ts';
import { CacheVersions } from '../caches/cache-versions.ts';
import { DEFAULT_LOGIN_LIMITS, LoginThrottle, type LoginThrottleLimits } from '../auth/login-throttle.ts';
import { TokenService } from '../auth/token-service.ts';
import { BootstrapService } from '../bootstrap/bootstrap-service.ts';
import { ChangeFeed } from '../changes/change-feed.ts';
import { ChangeFanout } from '../changes/change-fanout.ts';
import { ChangeStreamService } from '../events/change-stream.ts';
import { ProjectEventService } from '../events/project-events.ts';
import { CredentialDigest } from '../crypto/credential-digest.ts';
import { Keyring } from '../crypto/keyring.ts';
import { TokenSigner } from '../crypto/tokens.ts';
import type { Logger } from 'pino';
import type { Database } from '../db/database.ts';
import type { ServiceDeps } from '../services/deps.ts';
import { Lookups } from '../services/lookups.ts';
import { UnitOfWork } from '../services/unit-of-work.ts';
import { EnvironmentService } from '../environments/environment-service.ts';
import { FolderService } from '../folders/folder-service.ts';
import { ClusterService } from '../clusters/cluster-service.ts';
import { NamespaceGrantService } from '../grants/grant-service.ts';
import { ProjectClaims } from '../grants/project-claims.ts';
import { IdentityService } from '../identities/identity-service.ts';
import { ImportService } from '../imports/import-service.ts';
import { IntegrationAuthService } from '../integrations/integration-auth-service.ts';
import { IntegrationService } from '../integrations/integration-service.ts';
import { SyncBarrier } from '../integrations/sync-barrier.ts';
import { SyncProgress } from '../integrations/sync-progress.ts';
import { IdentityMembershipService } from '../memberships/identity-membership-service.ts';
import { UserMembershipService } from '../memberships/user-membership-service.ts';
import { OrgMembershipService } from '../orgs/org-membership-service.ts';
import { PermissionService } from '../permissions/permission-service.ts';
import { PrivilegeService } from '../privileges/privilege-service.ts';
import { ProjectService } from '../projects/project-service.ts';
import { RoleService } from '../roles/role-service.ts';
import { SecretBatchService } from '../secrets/secret-batch-service.ts';
import { OperatorListings } from '../secrets/operator-listing.ts';
import { SecretReader } from '../secrets/secret-reader.ts';
import { SecretService } from '../secrets/secret-service.ts';
import { SecretTagging } from '../secrets/secret-tagging.ts';
import { TagService } from '../tags/tag-service.ts';
import { DynamicSecretLeaseService, type LeaseLimits } from '../dynamic-secrets/dynamic-secret-lease-service.ts';
import { DynamicSecretService } from '../dynamic-secrets/dynamic-secret-service.ts';
import { UniversalAuthLogin } from '../universal-auth/ua-login.ts';
import { UniversalAuthService } from '../universal-auth/ua-service.ts';
import { JwtAuthService } from '../jwt-auth/jwt-auth-service.ts';
import { jwtLoginMethod } from '../jwt-auth/jwt-verifier.ts';
import { KubernetesAuthService } from '../kubernetes-auth/kubernetes-auth-service.ts';
import { kubernetesLoginMethod } from '../kubernetes-auth/token-review.ts';
import { WorkloadLogin } from '../workload-auth/workload-login.ts';
import { InviteService } from '../users/invite-service.ts';
import { UserLogin } from '../users/user-login.ts';
import { OidcConfigService } from '../sso/oidc-config-service.ts';
import { OidcLogin } from '../sso/oidc-login.ts';
import { MfaService } from '../mfa/mfa-service.ts';
import { SessionService } from '../auth/session-service.ts';
import { AppConnectionService } from '../app-connections/app-connection-service.ts';
import { RotationService } from '../rotations/rotation-service.ts';
import { ApprovalPolicyService } from '../approvals/approval-policy-service.ts';
import { ApprovalRequestService } from '../approvals/approval-request-service.ts';
import { SnapshotService } from '../snapshots/snapshot-service.ts';
import { Outbound, type OutboundOptions } from '../outbound/outbound.ts';
import { AuditStreamDispatcher, type StreamLimits } from '../audit-streams/audit-stream-dispatcher.ts';
import { AuditLogStreamService } from '../audit-streams/audit-stream-service.ts';
import type { DeliveryClock } from '../webhooks/webhook-delivery.ts';
import { type DispatchLimits, WebhookDispatcher } from '../webhooks/webhook-dispatcher.ts';
import { WebhookService } from '../webhooks/webhook-service.ts';

export const DEFAULT_CLUSTER_NAME = 'local';

export interface SecurityKeys {
  /** 32 bytes, base64. */
  encryptionKey: string;
  authSecret: string;
}

export interface ServiceOptions {
  auditRetentionDays: number;
  /** Login throttling (defaults: DEFAULT_LOGIN_LIMITS). */
  loginLimits?: LoginThrottleLimits;
  /** Where lockouts are logged. */
  logger?: Logger;
  /** The in-process operator's cluster name: the one a namespace grant names by default (`local`). */
  clusterName?: string;
  /** Caps on streams and waits per caller and organization (defaults: HELD_REQUEST_LIMITS). */
  heldRequestLimits?: Partial<Record<HeldRequestKind, HeldRequestLimit>>;
  /** The URL people and providers reach this server at: single sign-on's redirect URI is built from it (default http://127.0.0.1:8080). */
  publicUrl?: string;
  /** Break-glass: org admins may sign in with a password to an organization that enforces single sign-on (audited). */
  ssoBreakGlass?: boolean;
  /** Milliseconds since the epoch, for TOTP codes (tests inject one). */
  clock?: () => number;
  /** Outbound deliveries (webhooks, audit log streams): timeout (default 10 s) and whether private addresses are refused (default not). */
  outbound?: Partial<OutboundOptions>;
  /** The webhook and audit log stream dispatchers' clock (tests inject one) and limits. */
  deliveryClock?: DeliveryClock;
  dispatchLimits?: Partial<DispatchLimits>;
  streamLimits?: Partial<StreamLimits>;
  /** Caps on dynamic secret leases held at once (tests lower them). */
  leaseLimits?: LeaseLimits;
}

export const DEFAULT_PUBLIC_URL = 'http://127.0.0.1:8080';

/** The composition root: every service, wired once per process. */
export function createServices(database: Database, keys: SecurityKeys, options: ServiceOptions) {
  const { db } = database;
  const cacheVersions = CacheVersions.of(database);
  const permissions = new PermissionService(db, cacheVersions, options.logger);
  const audit = new AuditService(options.auditRetentionDays, db);
  const changes = new ChangeFeed(cacheVersions);
  const lookups = new Lookups(cacheVersions);
  const deps: ServiceDeps = {
    db,
    unitOfWork: new UnitOfWork({ db, permissions, audit, changes, lookups, cacheVersions, scriptCommits: database.scriptCommits }),
    permissions,
    audit,
    changes,
    keyring: new Keyring(Buffer.from(keys.encryptionKey, 'base64')),
    lookups,
  };
  const auth = new AuthService(db, new TokenSigner(keys.authSecret), cacheVersions);
  const credentials = new CredentialDigest();
  const changeFanout = new ChangeFanout(database, deps.changes);
  const syncProgress = new SyncProgress(database);
  const secretReader = new SecretReader(deps);
  const loginThrottle = new LoginThrottle(db, deps.unitOfWork, options.loginLimits ?? DEFAULT_LOGIN_LIMITS, options.logger);
  const projects = new ProjectService(deps);
  const held = { ...HELD_REQUEST_LIMITS, ...options.heldRequestLimits };
  const syncBarrier = new SyncBarrier(deps, syncProgress, held.revisionWaits);
  const outbound = new Outbound({ timeoutMs: 10_000, denyPrivateAddresses: false, ...options.outbound });
  const deliveryClock = options.deliveryClock ?? { now: Date.now };
  return {
    database,
    ...deps,
    auth,
    credentials,
    loginThrottle,
    ...accessControlServices(deps, auth, credentials, loginThrottle, options),
    ...workloadAuthServices(deps, auth, loginThrottle, options.logger),
    ...signInServices(deps, auth, options),
    bootstrap: new BootstrapService(db, deps.unitOfWork, auth),
    projects,
    namespaceGrants: new NamespaceGrantService(deps, options.clusterName ?? DEFAULT_CLUSTER_NAME),
    projectClaims: new ProjectClaims(deps, projects, options.clusterName ?? DEFAULT_CLUSTER_NAME),
    environments: new EnvironmentService(deps),
    folders: new FolderService(deps),
    auditExport: new AuditExportService(deps),
    secrets: new SecretService(deps),
    secretReader,
    operatorListings: new OperatorListings(secretReader, deps),
    secretBatch: new SecretBatchService(deps),
    secretTagging: new SecretTagging(deps),
    approvalPolicies: new ApprovalPolicyService(deps),
    approvalRequests: new ApprovalRequestService(deps),
    snapshots: new SnapshotService(deps),
    webhooks: new WebhookService(deps, outbound, deliveryClock),
    webhookDispatcher: new WebhookDispatcher(deps, db, outbound, deliveryClock, options.dispatchLimits),
    auditLogStreams: new AuditLogStreamService(deps),
    auditStreamDispatcher: new AuditStreamDispatcher(deps, db, outbound, deliveryClock, options.streamLimits),
    imports: new ImportService(deps),
    tags: new TagService(deps),
    dynamicSecrets: new DynamicSecretService(deps),
    dynamicSecretLeases: new DynamicSecretLeaseService(deps, { clock: options.clock, limits: options.leaseLimits }),
    integrationAuths: new IntegrationAuthService(deps),
    integrations: new IntegrationService(deps, syncProgress),
    clusters: new ClusterService(deps, options.clusterName ?? DEFAULT_CLUSTER_NAME),
    syncBarrier,
    changeFanout,
    accessWatch: new AccessWatch(database),
    projectEvents: new ProjectEventService(deps, changeFanout, secretReader, held.projectEventStreams),
    changeStreams: new ChangeStreamService(deps, changeFanout, held.changeStreams),
    appConnections: new AppConnectionService(deps),
    rotations: new RotationService(deps, syncBarrier, options.clock),
  };
}

/** Identities, universal auth, users, memberships, roles and privileges. */
function accessControlServices(deps: ServiceDeps, auth: AuthService, credentials: CredentialDigest, loginThrottle: LoginThrottle, options: ServiceOptions) {
  return {
    tokens: new TokenService(deps, auth),
    identities: new IdentityService(deps),
    universalAuth: new UniversalAuthService(deps, credentials),
    universalAuthLogin: new UniversalAuthLogin(auth, credentials, loginThrottle),
    invites: new InviteService(deps, credentials, loginThrottle),
    userLogin: new UserLogin(deps, auth, loginThrottle, { ssoBreakGlass: options.ssoBreakGlass, logger: options.logger, clock: options.clock }),
    mfa: new MfaService(deps, options.clock),
    sessions: new SessionService(deps),
    orgMemberships: new OrgMembershipService(deps),
    userMemberships: new UserMembershipService(deps),
    identityMemberships: new IdentityMembershipService(deps),
    roles: new RoleService(deps),
    privileges: new PrivilegeService(deps),
  };
}

/** Single sign-on (OIDC) and its settings. */
function signInServices(deps: ServiceDeps, auth: AuthService, options: ServiceOptions) {
  const publicUrl = options.publicUrl ?? DEFAULT_PUBLIC_URL;
  return {
    oidcConfigs: new OidcConfigService(deps, publicUrl),
    oidcLogin: new OidcLogin(deps, auth, publicUrl, options.logger),
  };
}

/** Kubernetes Auth and JWT Auth: their configuration and their logins. */
function workloadAuthServices(deps: ServiceDeps, auth: AuthService, loginThrottle: LoginThrottle, logger: ServiceOptions['logger']) {
  return {
    kubernetesAuth: new KubernetesAuthService(deps),
    kubernetesAuthLogin: new WorkloadLogin(deps.db, auth, loginThrottle, kubernetesLoginMethod(deps.keyring), logger),
    jwtAuth: new JwtAuthService(deps),
    jwtAuthLogin: new WorkloadLogin(deps.db, auth, loginThrottle, jwtLoginMethod(), logger),
  };
}

export type Services = ReturnType<typeof createServices>;
