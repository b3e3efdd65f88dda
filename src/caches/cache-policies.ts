/**
 * Every cache the process keeps across requests, with what it may serve stale
 * and what ends an entry. README.md beside this file states the argument.
 */

/** A cache of rows read by (almost) every request, dropped on any write in this process to the tables listed. */
export interface WriteInvalidatedPolicy {
  /** The tables (as the code names them) its values are read from. */
  readonly tables: readonly string[];
  /** The longest an entry is used: how late a write made through another replica is seen. */
  readonly ttlMs: number;
  readonly maxEntries: number;
}

/** A cache of values derived from one project's data, each reused only while the project's change-feed revision is the one it was read at. */
export interface RevisionPolicy {
  /** The most the entries may weigh together (secrets, bytes); the least recently stored go first. */
  readonly maxWeight: number;
}

/** How late a change made through another replica shows in the lookups below; through this process it shows at once. */
export const REPLICA_STALENESS_MS = 1_000;

const lookup = (tables: string[]): WriteInvalidatedPolicy => ({ tables, ttlMs: REPLICA_STALENESS_MS, maxEntries: 10_000 });

export const CACHE_POLICIES = {
  /** Projects by id and by organization and slug (services/lookups.ts). */
  // Not kept (ttl 0): a project, environment or folder deleted through another replica (the API beside an
  // operator) must not look present for a moment, or a listing of it reads empty and a synced Secret is emptied.
  projects: { ...lookup(['projects']), ttlMs: 0 },
  /** Environments by project and slug (services/lookups.ts). */
  environments: { ...lookup(['projects', 'projectEnvironments']), ttlMs: 0 },
  /** Folders by environment and path (services/lookups.ts). */
  folders: { ...lookup(['projects', 'projectEnvironments', 'secretFolders']), ttlMs: 0 },
  /**
   * What an actor may do in a project (permissions/permission-service.ts): every
   * table whose writes may change it. A temporary grant starting or ending ends
   * the entry at that moment.
   */
  permissions: lookup([
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
  identityTokens: lookup(['identityAccessTokens', 'identities', 'identityOrgMemberships', 'identityUniversalAuths']),
  /** User sessions and their owners (auth/auth-service.ts). */
  userSessions: lookup(['userSessions', 'users', 'orgMemberships']),
  /** Plain secret listings for machine callers, in secrets (secrets/secret-reader.ts). */
  listings: { maxWeight: 20_000 } satisfies RevisionPolicy,
  /** The same listings' JSON bodies, in bytes (http/routes/secrets.routes.ts). */
  serializedListings: { maxWeight: 16 * 1024 * 1024 } satisfies RevisionPolicy,
} as const;
