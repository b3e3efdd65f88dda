import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, inject, test } from 'vitest';
import { COFFER_BIN, type CofferProcess, callCoffer, startCoffer, stopCoffer } from '../support/coffer-process.ts';
import pg from 'pg';
import { adminQuery, databaseUrl } from '../support/postgres-server.ts';

/**
 * The real binary: a start with another root key stops before serving, and
 * `coffer rotate-key` moves the database to a new key (PostgreSQL, and the
 * embedded database whose key lives in keys.json).
 */
const run = promisify(execFile);
const servers: CofferProcess[] = [];
const dirs: string[] = [];
const keyA = randomBytes(32).toString('base64');
const keyB = randomBytes(32).toString('base64');
const authSecret = randomBytes(48).toString('base64');
let postgresUrl: string;

async function coffer(args: string[], env: Record<string, string>) {
  return run(process.execPath, [COFFER_BIN, ...args], { env: { ...process.env, COFFER_OPERATOR: 'false', ...env }, timeout: 60_000 }).then(
    ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
    (error: { code: number; stdout: string; stderr: string }) => ({ code: error.code, stdout: error.stdout, stderr: error.stderr }),
  );
}

async function serve(env: Record<string, string>) {
  const server = await startCoffer({ COFFER_OPERATOR: 'false', ...env });
  servers.push(server);
  return server;
}

/** Bootstraps, stores one secret; returns what reads it back. */
async function seed(server: CofferProcess) {
  const boot = await callCoffer(server, 'POST', '/api/v1/admin/bootstrap', undefined, { email: 'key@example.com', password: 'key test password', organization: 'Keys' });
  const token = boot.body.identity.credentials.token as string;
  const project = await callCoffer(server, 'POST', '/api/v2/workspace', token, { projectName: 'Keyed' });
  const projectId = project.body.project.id as string;
  const created = await callCoffer(server, 'POST', '/api/v3/secrets/raw/DB_PASSWORD', token, {
    workspaceId: projectId,
    environment: 'dev',
    secretValue: 'kept-through-rotation',
  });
  expect(created.status).toBe(200);
  return (target: CofferProcess) => callCoffer(target, 'GET', `/api/v3/secrets/raw/DB_PASSWORD?workspaceId=${projectId}&environment=dev`, token);
}

/** The wrapped project data keys and the root key's check value, as stored. */
async function keyRows() {
  const projects = await adminQuery(postgresUrl, "SELECT id, encode(encrypted_data_key, 'hex') AS key FROM projects ORDER BY id");
  const installation = await adminQuery(postgresUrl, "SELECT encode(root_key_check, 'hex') AS check FROM installation");
  return { projects: projects.rows, installation: installation.rows };
}

beforeAll(async () => {
  const adminUrl = inject('postgresAdminUrl');
  const name = `${inject('postgresRunPrefix')}_${randomBytes(6).toString('hex')}`;
  await adminQuery(adminUrl, `CREATE DATABASE ${name}`);
  postgresUrl = databaseUrl(adminUrl, name);
});
afterAll(async () => {
  for (const server of servers) await stopCoffer(server);
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

describe('PostgreSQL', () => {
  const env = (encryptionKey: string) => ({ DATABASE_URL: postgresUrl, COFFER_ENCRYPTION_KEY: encryptionKey, COFFER_AUTH_SECRET: authSecret });
  let read: Awaited<ReturnType<typeof seed>>;

  test('a start with another root key exits before serving, with a clear message', async () => {
    const server = await serve(env(keyA));
    read = await seed(server);
    expect((await read(server)).body.secret.secretValue).toBe('kept-through-rotation');

    const refused = await coffer(['serve'], { ...env(keyB), COFFER_PORT: '0', COFFER_PROBE_PORT: '0' });
    // exit 3: a setting (the root key) that does not fit, as README "Exit codes" says
    expect(refused.code).toBe(3);
    expect(refused.stderr).toMatch(/COFFER_ENCRYPTION_KEY is not the root key of this database \(installation [0-9a-f-]{36}\)/);
    expect(refused.stdout).not.toContain('is serving the API');
  });

  test('rotate-key refuses while any server holds the database, whatever its connections are named, and names it; nothing rotated', async () => {
    // a server whose DATABASE_URL names its connections: nothing but the serving lock can tell it is a coffer server
    const named = await serve({ ...env(keyA), DATABASE_URL: `${postgresUrl}?application_name=whatever` });
    expect(await stopCoffer(servers.shift()!)).toBe(0);
    const keysBefore = await keyRows();

    const refused = await coffer(['rotate-key', '--new-key', keyB], env(keyA));
    // exit 4: the database cannot be used now, as for an embedded directory in use
    expect(refused.code).toBe(4);
    expect(refused.stderr).toContain('nothing rotated: this database is in use by 1 coffer process(es) holding it');
    expect(refused.stderr).toMatch(new RegExp(`"coffer serve pid ${named.process.pid} on [^"]+" \\(backend pid \\d+, from 127\\.0\\.0\\.1:\\d+\\)`));
    expect(await keyRows()).toEqual(keysBefore);
    expect((await read(named)).body.secret.secretValue).toBe('kept-through-rotation');
    expect(await stopCoffer(servers.pop()!)).toBe(0);
  });

  test('a server does not start while a rotation holds the database', async () => {
    const rotation = new pg.Client({ connectionString: postgresUrl });
    await rotation.connect();
    try {
      await rotation.query('SELECT pg_advisory_lock($1, 1)', [0x436f6672]);
      const refused = await coffer(['serve'], { ...env(keyA), COFFER_PORT: '0', COFFER_PROBE_PORT: '0' });
      expect(refused.code).toBe(4);
      expect(refused.stderr).toContain('coffer rotate-key is re-wrapping the keys of this database');
      expect(refused.stdout).not.toContain('is serving the API');
    } finally {
      await rotation.end();
    }
  });

  test('rotate-key with a wrong current key or a malformed new key changes nothing', async () => {
    expect((await coffer(['rotate-key', '--new-key', keyA], env(keyB))).stderr).toContain('the current key (COFFER_ENCRYPTION_KEY) is not the root key');
    expect((await coffer(['rotate-key', '--new-key', 'c2hvcnQ='], env(keyA))).stderr).toContain('the new root key must be 32 bytes');
    expect((await coffer(['rotate-key'], env(keyA))).stderr).toContain('the new root key is required');
  });

  test('rotate, then start with the new key (secrets read as before) and with the old key (refused)', async () => {
    const rotated = await coffer(['rotate-key', '--new-key', keyB], env(keyA));
    expect(rotated.code, rotated.stderr).toBe(0);
    expect(rotated.stdout).toContain('Re-wrapped the data keys of 1 project(s) under the new root key');
    expect(rotated.stdout + rotated.stderr).not.toContain(keyB);

    const old = await coffer(['serve'], { ...env(keyA), COFFER_PORT: '0', COFFER_PROBE_PORT: '0' });
    expect(old.code).toBe(3);
    expect(old.stderr).toContain('COFFER_ENCRYPTION_KEY is not the root key of this database');

    const server = await serve(env(keyB));
    expect((await read(server)).body.secret.secretValue).toBe('kept-through-rotation');
  });
});

describe('embedded database with keys.json', () => {
  test('rotate-key replaces the key in keys.json; the next start reads every secret', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'coffer-rotate-'));
    dirs.push(dataDir);
    const env = { COFFER_DATA_DIR: dataDir, DATABASE_URL: '' };
    const first = await serve(env);
    const read = await seed(first);
    const before = JSON.parse(readFileSync(join(dataDir, 'keys.json'), 'utf8'));

    const busy = await coffer(['rotate-key', '--new-key', keyB], env);
    expect(busy.code).toBe(4);
    expect(busy.stderr).toContain('is in use by coffer serve');
    expect(await stopCoffer(servers.pop()!)).toBe(0);

    const rotated = await coffer(['rotate-key', '--new-key', keyB], env);
    expect(rotated.code, rotated.stderr).toBe(0);
    expect(rotated.stdout).toContain(`The new key replaced the old one in ${join(dataDir, 'keys.json')}`);
    const after = JSON.parse(readFileSync(join(dataDir, 'keys.json'), 'utf8'));
    expect(after).toEqual({ ...before, encryptionKey: keyB });

    const second = await serve(env);
    expect((await read(second)).body.secret.secretValue).toBe('kept-through-rotation');
    expect(await stopCoffer(servers.pop()!)).toBe(0);
    const old = await coffer(['serve'], { ...env, COFFER_ENCRYPTION_KEY: before.encryptionKey, COFFER_PORT: '0', COFFER_PROBE_PORT: '0' });
    expect(old.code).toBe(3);
    expect(old.stderr).toContain('COFFER_ENCRYPTION_KEY is not the root key of this database');
  });
});
