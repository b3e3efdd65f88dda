import { describe, expect, test } from 'vitest';
import { ConfigError, loadConfig, loginLimits, parseConfig } from '../../src/config.ts';
import { DEFAULT_LOGIN_LIMITS } from '../../src/auth/login-throttle.ts';

const key = Buffer.alloc(32, 7).toString('base64');
const secret = 's'.repeat(48);

describe('configuration', () => {
  test('defaults', () => {
    expect(loadConfig({}, {})).toMatchObject({
      host: '127.0.0.1',
      port: 8080,
      probePort: 8081,
      dataDir: './.coffer-data',
      logLevel: 'info',
      auditRetentionDays: 90,
      trustedProxies: [],
    });
  });

  test('database timeouts and pool size: defaults, durations, flags', () => {
    expect(loadConfig({}, {})).toMatchObject({ databaseConnectTimeout: 5_000, databaseStatementTimeout: 10_000, databasePoolSize: 10 });
    const config = loadConfig({ 'db-statement-timeout': '1m' }, { COFFER_DB_CONNECT_TIMEOUT: '1500ms', COFFER_DB_STATEMENT_TIMEOUT: '30s', COFFER_DB_POOL_SIZE: '4' });
    expect(config).toMatchObject({ databaseConnectTimeout: 1_500, databaseStatementTimeout: 60_000, databasePoolSize: 4 });
    expect(loadConfig({}, {}).databasePreparedStatements).toBe(true);
    expect(loadConfig({}, { COFFER_DB_PREPARED_STATEMENTS: 'false' }).databasePreparedStatements).toBe(false);
    expect(() => loadConfig({}, { COFFER_DB_PREPARED_STATEMENTS: 'no' })).toThrow(/COFFER_DB_PREPARED_STATEMENTS/);
  });

  test('login throttling: the defaults are the shipped limits; the credential guard has its own setting', () => {
    expect(loginLimits(loadConfig({}, {}))).toEqual(DEFAULT_LOGIN_LIMITS);
    const limits = loginLimits(loadConfig({ 'login-credential-max-failures': '50' }, { COFFER_LOGIN_MAX_FAILURES: '3' }));
    expect(limits).toMatchObject({ maxFailures: 3, credentialMaxFailures: 50 });
  });

  test('flags override the environment', () => {
    const config = loadConfig({ port: '9000' }, { COFFER_PORT: '7000', COFFER_HOST: '0.0.0.0', COFFER_TRUSTED_PROXIES: '10.0.0.1, 10.1.0.0/16' });
    expect(config).toMatchObject({ port: 9000, host: '0.0.0.0', trustedProxies: ['10.0.0.1', '10.1.0.0/16'] });
  });

  test.each([
    [{ COFFER_PORT: 'eighty' }, 'COFFER_PORT (--port)'],
    [{ COFFER_PROBE_PORT: '70000' }, 'COFFER_PROBE_PORT (--probe-port)'],
    [{ COFFER_LOG_LEVEL: 'loud' }, 'COFFER_LOG_LEVEL (--log-level)'],
    [{ COFFER_DB_CONNECT_TIMEOUT: '5' }, 'COFFER_DB_CONNECT_TIMEOUT (--db-connect-timeout)'],
    [{ COFFER_DB_STATEMENT_TIMEOUT: '100ms' }, 'COFFER_DB_STATEMENT_TIMEOUT (--db-statement-timeout)'],
    [{ COFFER_DB_POOL_SIZE: '0' }, 'COFFER_DB_POOL_SIZE (--db-pool-size)'],
    [{ COFFER_ENCRYPTION_KEY: 'c2hvcnQ=' }, 'COFFER_ENCRYPTION_KEY (--encryption-key)'],
    [{ DATABASE_URL: 'mysql://x' }, 'DATABASE_URL (--database-url)'],
    [{ DATABASE_URL: 'postgres://h/db' }, 'COFFER_ENCRYPTION_KEY (--encryption-key): is required when DATABASE_URL is set'],
    [{ DATABASE_URL: 'postgres://h/db', COFFER_ENCRYPTION_KEY: key }, 'COFFER_AUTH_SECRET (--auth-secret): is required'],
  ])('%o fails naming the setting', (env, message) => {
    expect(() => loadConfig({}, env)).toThrow(ConfigError);
    expect(() => loadConfig({}, env)).toThrow(message);
  });

  test('an external database with both keys is accepted', () => {
    expect(parseConfig({ databaseUrl: 'postgresql://h/db', encryptionKey: key, authSecret: secret }).databaseUrl).toBe('postgresql://h/db');
  });
});

describe('when the operator starts (COFFER_OPERATOR)', async () => {
  const { mkdtempSync, writeFileSync } = await import('node:fs');
  const { join } = await import('node:path');
  const { tmpdir } = await import('node:os');
  const { operatorKubeConfig } = await import('../../src/operator/start.ts');
  const dir = mkdtempSync(join(tmpdir(), 'coffer-kube-'));
  const kubeconfig = join(dir, 'kubeconfig');
  writeFileSync(
    kubeconfig,
    'apiVersion: v1\nkind: Config\nclusters: [{name: laptop, cluster: {server: "https://10.0.0.1:6443"}}]\nusers: [{name: me, user: {token: t}}]\ncontexts: [{name: c, context: {cluster: laptop, user: me}}]\ncurrent-context: c\n',
  );
  const token = join(dir, 'token');
  writeFileSync(token, 'service-account-token');
  const settings = (operator: string) => loadConfig({}, { COFFER_OPERATOR: operator });
  /** The client library reads process.env itself when it loads a configuration. */
  function withEnv<T>(env: Record<string, string>, run: () => T): T {
    const saved = Object.fromEntries(Object.keys(env).map((name) => [name, process.env[name]]));
    Object.assign(process.env, env);
    try {
      return run();
    } finally {
      for (const [name, value] of Object.entries(saved)) {
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      }
    }
  }

  test('auto with only a kubeconfig does not start it, and says how to', () => {
    const found = operatorKubeConfig(settings('auto'), { KUBECONFIG: kubeconfig }, join(dir, 'absent'));
    expect(found).toEqual({ reason: expect.stringContaining('a kubeconfig alone needs --operator true') });
  });

  test('auto inside a cluster (service-account token and KUBERNETES_SERVICE_HOST) starts it on the in-cluster configuration', () => {
    const env = { KUBECONFIG: kubeconfig, KUBERNETES_SERVICE_HOST: '10.96.0.1', KUBERNETES_SERVICE_PORT: '443' };
    const found = withEnv(env, () => operatorKubeConfig(settings('auto'), env, token));
    expect('kubeConfig' in found && found.kubeConfig.getCurrentCluster()?.server).toBe('https://10.96.0.1:443');
  });

  test('true uses the kubeconfig; false never starts it', () => {
    const found = withEnv({ KUBECONFIG: kubeconfig }, () => operatorKubeConfig(settings('true'), { KUBECONFIG: kubeconfig }, join(dir, 'absent')));
    expect('kubeConfig' in found && found.kubeConfig.getCurrentCluster()?.server).toBe('https://10.0.0.1:6443');
    expect(operatorKubeConfig(settings('false'), { KUBECONFIG: kubeconfig, KUBERNETES_SERVICE_HOST: '10.96.0.1' }, token)).toEqual({
      reason: expect.stringContaining('disabled'),
    });
  });
});
