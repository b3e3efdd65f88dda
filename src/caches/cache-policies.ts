/**
 * Every cache the process keeps across requests, with what it is read from
 * and what ends an entry. README.md beside this file states the argument.
 */

/** A cache of rows read by (almost) every request, kept while the version the writers of its tables move is unchanged. */
export interface VersionedPolicy {
  /** The tables (as the code names them) its values are read from: a transaction writing one moves the cache's version. */
  readonly tables: readonly string[];
  readonly maxEntries: number;
  /**
   * It decides who may call at all or what they may do: a write to its tables may end someone's access, so
   * the streams and waits held open wake and check their caller again (caches/access-watch.ts).
   */
  readonly decidesAccess?: true;
}

/** A cache of values derived from one project's data, each reused only while the project's change-feed revision is the one it was read at. */
export interface RevisionPolicy {
  /** The most the entries may weigh together (secrets, bytes); the least recently stored go first. */
  readonly maxWeight: number;
}

const lookup = (tables: string[]): VersionedPolicy => ({ tables, maxEntries: 10_000 });
const accessLookup = (tables: string[]): VersionedPolicy => ({ ...lookup(tables), decidesAccess: true });

export const CACHE_POLICIES = {
  /** Projects by id and by organization and slug (services/lookups.ts). */
  projects: lookup(['projects']),
  /** Environments by project and slug (services/lookups.ts). */
  environments: lookup(['projects', 'projectEnvironments']),
  /** Folders by environment and path (services/lookups.ts). */
  folders: lookup(['projects', 'projectEnvironments', 'secretFolders']),
  /**
   * A SecretsProject's claim on its project with the namespace grants that decide who may use it
   * (services/lookups.ts claimWithGrants): looked up by every reconcile of every resource using the project.
   */
  projectClaims: lookup(['projects', 'projectClaims', 'namespaceGrants']),
  /** An environment's approval policies (secrets/protected-places.ts), looked up by every shared write. */
  approvalPolicies: lookup(['projects', 'projectEnvironments', 'secretApprovalPolicies']),
  /**
   * What an actor may do in a project (permissions/permission-service.ts): every
   * table whose writes may change it. A temporary grant starting or ending ends
   * the entry at that moment.
   */
  permissions: accessLookup([
    'projects',
    'identities',
    'users',
    'projectMemberships',
    'identityProjectMemberships',
    'projectMembershipRoles',
    'projectRoles',
    'identityProjectAdditionalPrivileges',
  ]),
  /** Identity access token rows and their owners (auth/auth-service.ts); a token with a use limit is never reused. */
  identityTokens: accessLookup([
    'identityAccessTokens',
    'identities',
    'identityOrgMemberships',
    'identityUniversalAuths',
    'identityKubernetesAuths',
    'identityJwtAuths',
    'clusters',
    'clusterIdentities',
  ]),
  /** User sessions and their owners (auth/auth-service.ts). */
  userSessions: accessLookup(['userSessions', 'users', 'orgMemberships']),
  /** Plain secret listings for machine callers, in secrets (secrets/secret-reader.ts). */
  listings: { maxWeight: 20_000 } satisfies RevisionPolicy,
  /** The same listings' JSON bodies, in bytes (http/routes/secrets.routes.ts). */
  serializedListings: { maxWeight: 16 * 1024 * 1024 } satisfies RevisionPolicy,
  /** Each project's newest change that can alter what a place resolves to, one per project (changes/change-feed.ts). */
  projectAlteredAt: { maxWeight: 10_000 } satisfies RevisionPolicy,
} as const;

/** The caches kept by version (caches/cache-versions.ts), each with a row of its own in `cache_versions`. */
export const VERSIONED_CACHES = ['projects', 'environments', 'folders', 'projectClaims', 'approvalPolicies', 'permissions', 'identityTokens', 'userSessions'] as const;
export type VersionedCacheName = (typeof VERSIONED_CACHES)[number];

/**
 * Statements that only add a credential or count its use (a login's token row or session, a token's use count or
 * renewal): they end nobody's access, so they wake no held request (every login or counted use would otherwise make
 * every open stream check its caller again). Which tables a login inserts into; which columns a use or renewal sets.
 */
export const CREDENTIAL_BOOKKEEPING = {
  inserts: new Set(['identityAccessTokens', 'userSessions']),
  updates: { identityAccessTokens: new Set(['accessTokenNumUses', 'accessTokenLastUsedAt', 'accessTokenLastRenewedAt', 'updatedAt']) } as Record<
    string,
    ReadonlySet<string>
  >,
} as const;
