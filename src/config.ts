import { z } from 'zod';

/** Where a setting is listed in the command-line help; each command takes the groups it uses. */
export type SettingGroup = 'server' | 'storage' | 'keys' | 'logging' | 'login' | 'operator' | 'remote';

/** Every setting: its environment variable, its command-line flag, its help line and its rule (below). */
const settings = {
  host: { env: 'COFFER_HOST', flag: 'host', group: 'server', help: 'address to listen on (default 127.0.0.1; the container image sets 0.0.0.0)' },
  port: { env: 'COFFER_PORT', flag: 'port', group: 'server', help: 'API port (default 8080)' },
  probePort: { env: 'COFFER_PROBE_PORT', flag: 'probe-port', group: 'server', help: 'port of /healthz, /readyz and /metrics (default 8081)' },
  databaseUrl: {
    env: 'DATABASE_URL',
    flag: 'database-url',
    group: 'storage',
    help: 'PostgreSQL 14+, postgresql://user:password@host:5432/database (default: unset, the embedded database)',
  },
  dataDir: { env: 'COFFER_DATA_DIR', flag: 'data-dir', group: 'storage', help: 'embedded database and its generated keys (default ./.coffer-data)' },
  databaseConnectTimeout: {
    env: 'COFFER_DB_CONNECT_TIMEOUT',
    flag: 'db-connect-timeout',
    group: 'storage',
    help: 'how long a PostgreSQL connection may take to open (default 5s)',
  },
  databaseStatementTimeout: {
    env: 'COFFER_DB_STATEMENT_TIMEOUT',
    flag: 'db-statement-timeout',
    group: 'storage',
    help: 'how long one PostgreSQL statement may run (default 10s)',
  },
  databasePoolSize: { env: 'COFFER_DB_POOL_SIZE', flag: 'db-pool-size', group: 'storage', help: 'PostgreSQL connections per process (default 10)' },
  databasePreparedStatements: {
    env: 'COFFER_DB_PREPARED_STATEMENTS',
    flag: 'db-prepared-statements',
    group: 'storage',
    help: 'run prepared the statements the database is sent again (default true; false behind a PostgreSQL pooler that does not keep them per client)',
  },
  encryptionKey: {
    env: 'COFFER_ENCRYPTION_KEY',
    flag: 'encryption-key',
    group: 'keys',
    help: 'root key, 32 bytes base64 (openssl rand -base64 32); required with DATABASE_URL, else generated once',
  },
  authSecret: {
    env: 'COFFER_AUTH_SECRET',
    flag: 'auth-secret',
    group: 'keys',
    help: 'token signing secret, at least 32 characters; required with DATABASE_URL, else generated once',
  },
  logLevel: { env: 'COFFER_LOG_LEVEL', flag: 'log-level', group: 'logging', help: 'fatal, error, warn, info (default), debug, trace or silent' },
  logFormat: { env: 'COFFER_LOG_FORMAT', flag: 'log-format', group: 'logging', help: 'auto (default: readable lines in a terminal, else JSON), json or pretty' },
  auditRetentionDays: { env: 'COFFER_AUDIT_RETENTION_DAYS', flag: 'audit-retention-days', group: 'server', help: 'days an audit entry is kept (default 90)' },
  trustedProxies: {
    env: 'COFFER_TRUSTED_PROXIES',
    flag: 'trusted-proxies',
    group: 'server',
    help: 'comma-separated addresses or CIDRs whose X-Forwarded-For is believed',
  },
  operator: {
    env: 'COFFER_OPERATOR',
    flag: 'operator',
    group: 'operator',
    help: 'run the operator: auto (default: only inside a cluster, with service-account credentials), true (also with a kubeconfig) or false',
  },
  clusterName: { env: 'COFFER_CLUSTER_NAME', flag: 'cluster-name', group: 'operator', help: "this cluster's name in namespace grants (default local)" },
  resyncInterval: { env: 'COFFER_RESYNC_INTERVAL', flag: 'resync-interval', group: 'operator', help: 'full resync every (default 10m; changes are pushed at once)' },
  operatorNamespace: {
    env: 'COFFER_OPERATOR_NAMESPACE',
    flag: 'operator-namespace',
    group: 'operator',
    help: 'namespace of the leader-election Lease (default $POD_NAMESPACE or coffer-system)',
  },
  watchNamespace: { env: 'COFFER_WATCH_NAMESPACE', flag: 'watch-namespace', group: 'operator', help: 'watch one namespace only (default: all)' },
  operatorOrganization: { env: 'COFFER_OPERATOR_ORG', flag: 'operator-org', group: 'operator', help: 'organization (slug) the operator acts in (default: the only one)' },
  leaderElection: { env: 'COFFER_LEADER_ELECTION', flag: 'leader-election', group: 'operator', help: 'one replica reconciles at a time: true (default) or false' },
  operatorConcurrency: { env: 'COFFER_OPERATOR_CONCURRENCY', flag: 'operator-concurrency', group: 'operator', help: 'resources reconciled at once (default 16)' },
  server: { env: 'COFFER_SERVER', flag: 'server', group: 'remote', help: 'the Coffer server this operator syncs from, https://… (coffer operator)' },
  serverCaFile: {
    env: 'COFFER_SERVER_CA_FILE',
    flag: 'server-ca-file',
    group: 'remote',
    help: "PEM file of the CA that signs the server's certificate (default: the system's CAs)",
  },
  serverTlsServerName: {
    env: 'COFFER_SERVER_TLS_SERVER_NAME',
    flag: 'server-tls-server-name',
    group: 'remote',
    help: "the name the server's certificate carries, when not the URL's host",
  },
  serverClientCertFile: {
    env: 'COFFER_SERVER_CLIENT_CERT_FILE',
    flag: 'server-client-cert-file',
    group: 'remote',
    help: 'PEM client certificate, for a server or proxy that asks for one',
  },
  serverClientKeyFile: { env: 'COFFER_SERVER_CLIENT_KEY_FILE', flag: 'server-client-key-file', group: 'remote', help: 'PEM key of the client certificate' },
  authMethod: {
    env: 'COFFER_AUTH_METHOD',
    flag: 'auth-method',
    group: 'remote',
    help: "how the operator logs in to the server: 'kubernetes' (Kubernetes Auth with its own service-account token, no stored secret; the default) or 'universal' (a client secret from COFFER_CREDENTIALS_SECRET)",
  },
  identityId: {
    env: 'COFFER_IDENTITY_ID',
    flag: 'identity-id',
    group: 'remote',
    help: 'the machine identity (with Kubernetes Auth) the operator logs in as, with COFFER_AUTH_METHOD=kubernetes',
  },
  serviceAccountTokenFile: {
    env: 'COFFER_SERVICE_ACCOUNT_TOKEN_FILE',
    flag: 'service-account-token-file',
    group: 'remote',
    help: "the pod's service-account token, read again at each login (default /var/run/secrets/kubernetes.io/serviceaccount/token; a projected token with the server's audience works too)",
  },
  credentialsSecret: {
    env: 'COFFER_CREDENTIALS_SECRET',
    flag: 'credentials-secret',
    group: 'remote',
    help: "Secret (in the operator namespace) with the machine identity's universal-auth clientId and clientSecret (default coffer-operator-credentials)",
  },
  loginMaxFailures: {
    env: 'COFFER_LOGIN_MAX_FAILURES',
    flag: 'login-max-failures',
    group: 'login',
    help: 'failed logins of one client id or email from one source address before that pair is locked out (default 5)',
  },
  loginCredentialMaxFailures: {
    env: 'COFFER_LOGIN_CREDENTIAL_MAX_FAILURES',
    flag: 'login-credential-max-failures',
    group: 'login',
    help: 'failed logins of one client id or email from all addresses before it is guarded: one failure then locks an address out of it (default 20)',
  },
  loginAddressMaxFailures: {
    env: 'COFFER_LOGIN_ADDRESS_MAX_FAILURES',
    flag: 'login-address-max-failures',
    group: 'login',
    help: 'failed logins per source address before a lockout (default 30)',
  },
  loginFailureWindow: { env: 'COFFER_LOGIN_FAILURE_WINDOW', flag: 'login-failure-window', group: 'login', help: 'how long failures count (default 15m)' },
  loginLockout: { env: 'COFFER_LOGIN_LOCKOUT', flag: 'login-lockout', group: 'login', help: 'the first lockout, doubling with each one (default 1m)' },
  loginMaxLockout: { env: 'COFFER_LOGIN_MAX_LOCKOUT', flag: 'login-max-lockout', group: 'login', help: 'the longest lockout (default 1h)' },
  publicUrl: {
    env: 'COFFER_PUBLIC_URL',
    flag: 'public-url',
    group: 'server',
    help: "the URL browsers and OIDC providers reach this server at; single sign-on's redirect URI is built from it (default http://127.0.0.1:8080)",
  },
  outboundDenyPrivate: {
    env: 'COFFER_OUTBOUND_DENY_PRIVATE',
    flag: 'outbound-deny-private',
    group: 'server',
    help: 'true: webhook deliveries refuse receivers on loopback, private and link-local addresses (default false)',
  },
  ssoBreakGlass: {
    env: 'COFFER_SSO_BREAK_GLASS',
    flag: 'sso-break-glass',
    group: 'login',
    help: 'true lets org admins sign in with a password where single sign-on is enforced (audited; default false)',
  },
} as const satisfies Record<string, { env: string; flag: string; group: SettingGroup; help: string }>;

type SettingName = keyof typeof settings;

const port = z.coerce
  .number('must be a port number, 0 to 65535')
  .int('must be a port number, 0 to 65535')
  .min(0, 'must be a port number, 0 to 65535')
  .max(65535, 'must be a port number, 0 to 65535');

const base64Key32 = z.string().refine((value) => Buffer.from(value, 'base64').length === 32, 'must be 32 bytes, base64-encoded (openssl rand -base64 32)');

const DURATION_UNITS_MS = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 } as const;

/** "90s", "10m", "1h" → milliseconds. */
const duration = z
  .string()
  .regex(/^\d+(ms|s|m|h)$/, 'must be a duration such as 30s, 10m or 1h')
  .transform((value) => {
    const [, amount, unit] = /^(\d+)(ms|s|m|h)$/.exec(value)!;
    return Number(amount) * DURATION_UNITS_MS[unit as keyof typeof DURATION_UNITS_MS];
  })
  .refine((ms) => ms >= 1000, 'must be at least 1s');

const booleanText = z.enum(['true', 'false']).transform((value) => value === 'true');
const kubernetesName = z.string().regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/, 'must be a Kubernetes namespace name');

const configSchema = z
  .object({
    host: z.string().min(1).default('127.0.0.1'),
    port: port.default(8080),
    probePort: port.default(8081),
    databaseUrl: z
      .string()
      .regex(/^postgres(ql)?:\/\//, 'must be a postgres:// or postgresql:// URL')
      .optional(),
    dataDir: z.string().min(1).default('./.coffer-data'),
    encryptionKey: base64Key32.optional(),
    authSecret: z.string().min(32, 'must be at least 32 characters (openssl rand -base64 48)').optional(),
    logLevel: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
    logFormat: z.enum(['auto', 'json', 'pretty']).default('auto'),
    auditRetentionDays: z.coerce.number().int().min(1).max(36500).default(90),
    trustedProxies: z
      .string()
      .default('')
      .transform((value) =>
        value
          .split(',')
          .map((entry) => entry.trim())
          .filter(Boolean),
      ),
    operator: z.enum(['auto', 'true', 'false']).default('auto'),
    resyncInterval: duration.prefault('10m'),
    operatorNamespace: kubernetesName.default(process.env.POD_NAMESPACE || 'coffer-system'),
    watchNamespace: kubernetesName.optional(),
    operatorOrganization: z.string().min(1).optional(),
    leaderElection: booleanText.prefault('true'),
    operatorConcurrency: z.coerce.number().int().min(1).max(256).default(16),
    clusterName: z
      .string()
      .regex(/^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/, 'must be lowercase letters, digits and hyphens (at most 63)')
      .default('local'),
    server: z.url({ protocol: /^https?$/, error: 'must be an http:// or https:// URL' }).optional(),
    serverCaFile: z.string().min(1).optional(),
    serverTlsServerName: z.string().min(1).optional(),
    serverClientCertFile: z.string().min(1).optional(),
    serverClientKeyFile: z.string().min(1).optional(),
    authMethod: z.enum(['kubernetes', 'universal']).default('kubernetes'),
    identityId: z.uuid({ error: 'must be the id (a UUID) of a machine identity' }).optional(),
    serviceAccountTokenFile: z.string().min(1).default('/var/run/secrets/kubernetes.io/serviceaccount/token'),
    credentialsSecret: kubernetesName.default('coffer-operator-credentials'),
    loginMaxFailures: z.coerce.number().int().min(1).max(1_000_000).default(5),
    loginAddressMaxFailures: z.coerce.number().int().min(1).max(1_000_000).default(30),
    loginCredentialMaxFailures: z.coerce.number().int().min(1).max(1_000_000).default(20),
    loginFailureWindow: duration.prefault('15m'),
    loginLockout: duration.prefault('1m'),
    loginMaxLockout: duration.prefault('1h'),
    publicUrl: z.url({ protocol: /^https?$/, error: 'must be an http:// or https:// URL' }).default('http://127.0.0.1:8080'),
    ssoBreakGlass: booleanText.prefault('false'),
    outboundDenyPrivate: booleanText.prefault('false'),
    databaseConnectTimeout: duration.prefault('5s'),
    databaseStatementTimeout: duration.prefault('10s'),
    databasePoolSize: z.coerce.number().int().min(1).max(1000).default(10),
    databasePreparedStatements: booleanText.prefault('true'),
  })
  .superRefine((config, context) => {
    if (config.loginMaxLockout < config.loginLockout) {
      context.addIssue({ code: 'custom', path: ['loginMaxLockout'], message: 'must be at least COFFER_LOGIN_LOCKOUT' });
    }
  });

/** What a command needs of the configuration beyond valid values. */
export interface ConfigNeeds {
  /** The root key and the token secret (given, or generated in the embedded database's directory). False for `coffer migrate`, which reads neither. */
  keys?: boolean;
}

function missingKeys(config: Config): string[] {
  if (!config.databaseUrl) return [];
  return (['encryptionKey', 'authSecret'] as const)
    .filter((name) => !config[name])
    .map((name) => `${describeSetting(name)}: is required when DATABASE_URL is set (only the embedded database generates one)`);
}

export type Config = z.output<typeof configSchema>;
export type ConfigInput = Partial<Record<SettingName, string | number | undefined>>;

export class ConfigError extends Error {}

function describeSetting(name: SettingName): string {
  const { env, flag } = settings[name];
  return `${env} (--${flag})`;
}

/** Validates raw settings; a failure names every bad setting. */
export function parseConfig(input: ConfigInput, needs: ConfigNeeds = {}): Config {
  const result = configSchema.safeParse(input);
  const problems = result.success
    ? needs.keys === false
      ? []
      : missingKeys(result.data)
    : result.error.issues.map((issue) => {
        const name = issue.path[0] as SettingName | undefined;
        return `${name ? describeSetting(name) : 'configuration'}: ${issue.message}`;
      });
  if (result.success && problems.length === 0) return result.data;
  throw new ConfigError(`invalid configuration:\n  ${problems.join('\n  ')}`);
}

export interface SettingHelp {
  env: string;
  flag: string;
  group: SettingGroup;
  help: string;
}

/** The settings of these groups, for a command's flags and help. */
export function settingsIn(groups: readonly SettingGroup[]): SettingHelp[] {
  return Object.values(settings).filter((setting) => groups.includes(setting.group));
}

/** Reads settings from the environment, overridden by parsed command-line flags. */
export function loadConfig(flags: Record<string, unknown>, env: NodeJS.ProcessEnv = process.env, needs: ConfigNeeds = {}): Config {
  const input: ConfigInput = {};
  for (const [name, { env: envName, flag }] of Object.entries(settings) as [SettingName, (typeof settings)[SettingName]][]) {
    const fromFlag = flags[flag];
    const value = typeof fromFlag === 'string' ? fromFlag : env[envName];
    if (value !== undefined && value !== '') input[name] = value;
  }
  return parseConfig(input, needs);
}

/** The login throttle's limits from the configuration. */
export function loginLimits(config: Config) {
  return {
    maxFailures: config.loginMaxFailures,
    addressMaxFailures: config.loginAddressMaxFailures,
    credentialMaxFailures: config.loginCredentialMaxFailures,
    windowMs: config.loginFailureWindow,
    lockoutMs: config.loginLockout,
    maxLockoutMs: config.loginMaxLockout,
  };
}
