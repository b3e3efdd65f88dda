import { describe, expect, test } from 'vitest';
import { ConfigError, loadConfig, parseConfig } from '../../src/config.ts';

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

  test('flags override the environment', () => {
    const config = loadConfig({ port: '9000' }, { COFFER_PORT: '7000', COFFER_HOST: '0.0.0.0', COFFER_TRUSTED_PROXIES: '10.0.0.1, 10.1.0.0/16' });
    expect(config).toMatchObject({ port: 9000, host: '0.0.0.0', trustedProxies: ['10.0.0.1', '10.1.0.0/16'] });
  });

  test.each([
    [{ COFFER_PORT: 'eighty' }, 'COFFER_PORT (--port)'],
    [{ COFFER_PROBE_PORT: '70000' }, 'COFFER_PROBE_PORT (--probe-port)'],
    [{ COFFER_LOG_LEVEL: 'loud' }, 'COFFER_LOG_LEVEL (--log-level)'],
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
