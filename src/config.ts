import { z } from 'zod';

/** Every setting: its environment variable, its command-line flag and its rule. */
const settings = {
  host: { env: 'COFFER_HOST', flag: 'host' },
  port: { env: 'COFFER_PORT', flag: 'port' },
  probePort: { env: 'COFFER_PROBE_PORT', flag: 'probe-port' },
  databaseUrl: { env: 'DATABASE_URL', flag: 'database-url' },
  dataDir: { env: 'COFFER_DATA_DIR', flag: 'data-dir' },
  encryptionKey: { env: 'COFFER_ENCRYPTION_KEY', flag: 'encryption-key' },
  authSecret: { env: 'COFFER_AUTH_SECRET', flag: 'auth-secret' },
  logLevel: { env: 'COFFER_LOG_LEVEL', flag: 'log-level' },
  auditRetentionDays: { env: 'COFFER_AUDIT_RETENTION_DAYS', flag: 'audit-retention-days' },
  trustedProxies: { env: 'COFFER_TRUSTED_PROXIES', flag: 'trusted-proxies' },
  operator: { env: 'COFFER_OPERATOR', flag: 'operator' },
  resyncInterval: { env: 'COFFER_RESYNC_INTERVAL', flag: 'resync-interval' },
  operatorNamespace: { env: 'COFFER_OPERATOR_NAMESPACE', flag: 'operator-namespace' },
  watchNamespace: { env: 'COFFER_WATCH_NAMESPACE', flag: 'watch-namespace' },
  operatorOrganization: { env: 'COFFER_OPERATOR_ORG', flag: 'operator-org' },
  leaderElection: { env: 'COFFER_LEADER_ELECTION', flag: 'leader-election' },
  operatorConcurrency: { env: 'COFFER_OPERATOR_CONCURRENCY', flag: 'operator-concurrency' },
  clusterName: { env: 'COFFER_CLUSTER_NAME', flag: 'cluster-name' },
  loginMaxFailures: { env: 'COFFER_LOGIN_MAX_FAILURES', flag: 'login-max-failures' },
  loginAddressMaxFailures: { env: 'COFFER_LOGIN_ADDRESS_MAX_FAILURES', flag: 'login-address-max-failures' },
  loginFailureWindow: { env: 'COFFER_LOGIN_FAILURE_WINDOW', flag: 'login-failure-window' },
  loginLockout: { env: 'COFFER_LOGIN_LOCKOUT', flag: 'login-lockout' },
  loginMaxLockout: { env: 'COFFER_LOGIN_MAX_LOCKOUT', flag: 'login-max-lockout' },
  databaseConnectTimeout: { env: 'COFFER_DB_CONNECT_TIMEOUT', flag: 'db-connect-timeout' },
  databaseStatementTimeout: { env: 'COFFER_DB_STATEMENT_TIMEOUT', flag: 'db-statement-timeout' },
  databasePoolSize: { env: 'COFFER_DB_POOL_SIZE', flag: 'db-pool-size' },
} as const;

type SettingName = keyof typeof settings;

const port = z.coerce.number().int().min(0).max(65535);

const base64Key32 = z
  .string()
  .refine((value) => Buffer.from(value, 'base64').length === 32, 'must be 32 bytes, base64-encoded (openssl rand -base64 32)');

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
    auditRetentionDays: z.coerce.number().int().min(1).max(36500).default(90),
    trustedProxies: z
      .string()
      .default('')
      .transform((value) => value.split(',').map((entry) => entry.trim()).filter(Boolean)),
    operator: z.enum(['auto', 'true', 'false']).default('auto'),
    resyncInterval: duration.prefault('10m'),
    operatorNamespace: kubernetesName.default(process.env.POD_NAMESPACE || 'coffer-system'),
    watchNamespace: kubernetesName.optional(),
    operatorOrganization: z.string().min(1).optional(),
    leaderElection: booleanText.prefault('true'),
    operatorConcurrency: z.coerce.number().int().min(1).max(256).default(16),
    clusterName: z.string().regex(/^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/, 'must be lowercase letters, digits and hyphens (at most 63)').default('local'),
    loginMaxFailures: z.coerce.number().int().min(1).max(1_000_000).default(5),
    loginAddressMaxFailures: z.coerce.number().int().min(1).max(1_000_000).default(30),
    loginFailureWindow: duration.prefault('15m'),
    loginLockout: duration.prefault('1m'),
    loginMaxLockout: duration.prefault('1h'),
    databaseConnectTimeout: duration.prefault('5s'),
    databaseStatementTimeout: duration.prefault('10s'),
    databasePoolSize: z.coerce.number().int().min(1).max(1000).default(10),
  })
  .superRefine((config, context) => {
    if (config.loginMaxLockout < config.loginLockout) {
      context.addIssue({ code: 'custom', path: ['loginMaxLockout'], message: 'must be at least COFFER_LOGIN_LOCKOUT' });
    }
    if (!config.databaseUrl) return;
    for (const name of ['encryptionKey', 'authSecret'] as const) {
      if (!config[name]) {
        context.addIssue({
          code: 'custom',
          path: [name],
          message: 'is required when DATABASE_URL is set (only the embedded database generates one)',
        });
      }
    }
  });

export type Config = z.output<typeof configSchema>;
export type ConfigInput = Partial<Record<SettingName, string | number | undefined>>;

export class ConfigError extends Error {}

function describeSetting(name: SettingName): string {
  const { env, flag } = settings[name];
  return `${env} (--${flag})`;
}

/** Validates raw settings; a failure names every bad setting. */
export function parseConfig(input: ConfigInput): Config {
  const result = configSchema.safeParse(input);
  if (result.success) return result.data;
  const problems = result.error.issues.map((issue) => {
    const name = issue.path[0] as SettingName | undefined;
    return `${name ? describeSetting(name) : 'configuration'}: ${issue.message}`;
  });
  throw new ConfigError(`invalid configuration:\n  ${problems.join('\n  ')}`);
}

/** Command-line flags for every setting, in node:util parseArgs form. */
export const configFlags = Object.fromEntries(Object.values(settings).map(({ flag }) => [flag, { type: 'string' as const }]));

/** Reads settings from the environment, overridden by parsed command-line flags. */
export function loadConfig(flags: Record<string, unknown>, env: NodeJS.ProcessEnv = process.env): Config {
  const input: ConfigInput = {};
  for (const [name, { env: envName, flag }] of Object.entries(settings) as [SettingName, (typeof settings)[SettingName]][]) {
    const fromFlag = flags[flag];
    const value = typeof fromFlag === 'string' ? fromFlag : env[envName];
    if (value !== undefined && value !== '') input[name] = value;
  }
  return parseConfig(input);
}

/** The login throttle's limits from the configuration. */
export function loginLimits(config: Config) {
  return {
    maxFailures: config.loginMaxFailures,
    addressMaxFailures: config.loginAddressMaxFailures,
    windowMs: config.loginFailureWindow,
    lockoutMs: config.loginLockout,
    maxLockoutMs: config.loginMaxLockout,
  };
}
