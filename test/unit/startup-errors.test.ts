import { describe, expect, test } from 'vitest';
import { CliError, EXIT } from '../../src/cli/exit-codes.ts';
import { explainListenError, explainPostgresError, maskDatabaseUrl } from '../../src/cli/startup-errors.ts';

/**
 * The explanations the e2e tests cannot provoke on this machine's PostgreSQL
 * (it trusts every local connection): errors shaped as node-postgres raises them.
 */
const url = 'postgresql://coffer:hunter2@db.internal:6432/vault?sslmode=require&sslpassword=also-secret';
const serverError = (code: string, message: string) => Object.assign(new Error(message), { code, severity: 'FATAL' });

describe('explaining startup errors', () => {
  test('the URL shown never holds the password', () => {
    expect(maskDatabaseUrl(url)).toBe('postgresql://coffer:****@db.internal:6432/vault?sslmode=require&sslpassword=****');
    expect(maskDatabaseUrl('not a url')).toBe('(an unparseable URL)');
  });

  test('a wrong password (28P01)', () => {
    const explained = explainPostgresError(serverError('28P01', 'password authentication failed for user "coffer"'), url) as CliError;
    expect(explained).toBeInstanceOf(CliError);
    expect(explained.exitCode).toBe(EXIT.database);
    expect(explained.message).toBe(
      "PostgreSQL at postgresql://coffer:****@db.internal:6432/vault?sslmode=require&sslpassword=**** refused the password of user 'coffer'. Set the right user and password in DATABASE_URL (--database-url).",
    );
  });

  test('no right to create tables (42501)', () => {
    const explained = explainPostgresError(serverError('42501', 'permission denied for schema public'), url) as CliError;
    expect(explained.message).toContain("user 'coffer' may not create Coffer's tables in database 'vault' at db.internal (permission denied for schema public)");
    expect(explained.message).toContain('GRANT CREATE ON SCHEMA public TO "coffer"');
  });

  test('connection refused on every address of the host (an AggregateError)', () => {
    const refused = (address: string) => Object.assign(new Error(`connect ECONNREFUSED ${address}`), { code: 'ECONNREFUSED' });
    const explained = explainPostgresError(new AggregateError([refused('::1:6432'), refused('127.0.0.1:6432')]), url) as CliError;
    expect(explained.message).toContain('connection refused (nothing listens on db.internal:6432)');
  });

  test('errors it does not know pass through unchanged', () => {
    const other = new Error('something else');
    expect(explainPostgresError(other, url)).toBe(other);
    expect(explainListenError(other, 'API', '127.0.0.1', 8080, 'COFFER_PORT (--port)')).toBe(other);
  });

  test('a privileged port', () => {
    const explained = explainListenError(Object.assign(new Error('listen EACCES'), { code: 'EACCES' }), 'API', '0.0.0.0', 80, 'COFFER_PORT (--port)') as CliError;
    expect(explained.exitCode).toBe(EXIT.network);
    expect(explained.message).toBe(
      'cannot listen for the API on 0.0.0.0:80: not permitted (ports below 1024 need privileges). Set COFFER_PORT (--port) to a port above 1023.',
    );
  });
});
