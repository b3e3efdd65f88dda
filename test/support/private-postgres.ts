import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { freePort } from './free-port.ts';

/**
 * A PostgreSQL server of the test's own (initdb into a temp dir, its own port
 * on 127.0.0.1, trust auth), that the test may stop and start at will: the
 * machine's shared server must never be taken down. Built from the Debian
 * postgresql packages' binaries (`pg_config --bindir`, else the newest
 * /usr/lib/postgresql/<n>/bin). initdb refuses to run as root, so as root the
 * server runs as the `postgres` user (else `nobody`). The postmaster is a
 * direct child under `setpriv --pdeathsig SIGKILL`: a killed test runner
 * takes it down too.
 */
export interface PrivatePostgres {
  url: string;
  port: number;
  /** `fast`: SIGINT (clients are told, then disconnected); `immediate`: SIGQUIT (as a crash; recovery replays the WAL). */
  stop(mode?: 'fast' | 'immediate'): Promise<void>;
  start(): Promise<void>;
  readonly running: boolean;
  destroy(): Promise<void>;
  log(): string;
}

/** The directory of initdb and postgres; throws naming the package to install. */
export function binDir(): string {
  const fromEnv = process.env.PG_BINDIR;
  if (fromEnv) {
    if (existsSync(join(fromEnv, 'initdb'))) return fromEnv;
    throw new Error(`PG_BINDIR=${fromEnv} has no initdb: point it at PostgreSQL's bin directory (pg_config --bindir)`);
  }
  try {
    const dir = execFileSync('pg_config', ['--bindir'], { encoding: 'utf8' }).trim();
    if (existsSync(join(dir, 'initdb'))) return dir;
  } catch {
    // no pg_config on PATH
  }
  const root = '/usr/lib/postgresql';
  const versions = existsSync(root)
    ? readdirSync(root)
        .filter((name) => /^\d+$/.test(name))
        .sort((a, b) => Number(b) - Number(a))
    : [];
  for (const version of versions) if (existsSync(join(root, version, 'bin', 'initdb'))) return join(root, version, 'bin');
  throw new Error('No PostgreSQL server binaries (initdb, postgres): install the postgresql package (apt-get install postgresql) or set PG_BINDIR');
}

/** uid/gid to run the server as when we are root. */
function serverUser(): { uid: number; gid: number } | null {
  if (process.getuid?.() !== 0) return null;
  for (const name of ['postgres', 'nobody']) {
    try {
      const uid = Number(execFileSync('id', ['-u', name], { encoding: 'utf8' }).trim());
      const gid = Number(execFileSync('id', ['-g', name], { encoding: 'utf8' }).trim());
      return { uid, gid };
    } catch {
      // no such user
    }
  }
  throw new Error('Running as root and found neither a postgres nor a nobody user to run PostgreSQL as');
}

function asServerUser(user: { uid: number; gid: number } | null, command: string, args: string[]): [string, string[]] {
  const demote = user ? [`--reuid=${user.uid}`, `--regid=${user.gid}`, '--clear-groups'] : [];
  return ['setpriv', [...demote, '--pdeathsig', 'SIGKILL', command, ...args]];
}

/**
 * `superuserPassword`: connections over TCP must sign in with a password (scram-sha-256), so a test can prove which
 * passwords a role accepts; `url` carries the superuser's password.
 */
export async function startPrivatePostgres(options: { superuserPassword?: string } = {}): Promise<PrivatePostgres> {
  const bin = binDir();
  const user = serverUser();
  const dir = mkdtempSync(join(tmpdir(), 'coffer-private-pg-'));
  if (user) chownSync(dir, user.uid, user.gid);
  const data = join(dir, 'data');
  const passwordFile = join(dir, 'superuser-password');
  const auth = options.superuserPassword === undefined ? ['-A', 'trust'] : ['--auth-local=trust', '--auth-host=scram-sha-256', `--pwfile=${passwordFile}`];
  if (options.superuserPassword !== undefined) {
    writeFileSync(passwordFile, `${options.superuserPassword}\n`, { mode: 0o600 });
    if (user) chownSync(passwordFile, user.uid, user.gid);
  }
  const [initCommand, initArgs] = asServerUser(user, join(bin, 'initdb'), ['-D', data, '-U', 'postgres', ...auth, '-E', 'UTF8', '--locale=C', '--no-sync']);
  execFileSync(initCommand, initArgs, { stdio: 'pipe' });
  const port = await freePort();
  const credentials = options.superuserPassword === undefined ? 'postgres' : `postgres:${encodeURIComponent(options.superuserPassword)}`;
  const url = `postgres://${credentials}@127.0.0.1:${port}/postgres`;
  const output: string[] = [];
  let server: ChildProcess | null = null;

  const start = async () => {
    const [command, args] = asServerUser(user, join(bin, 'postgres'), ['-D', data, '-p', String(port), '-k', dir, '-c', 'listen_addresses=127.0.0.1']);
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout.on('data', (chunk) => output.push(String(chunk)));
    child.stderr.on('data', (chunk) => output.push(String(chunk)));
    server = child;
    const deadline = Date.now() + 60_000;
    while (Date.now() < deadline) {
      if (child.exitCode !== null) throw new Error(`postgres exited with ${child.exitCode}:\n${output.join('').slice(-2000)}`);
      if (await accepts(url)) return;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    throw new Error(`postgres did not accept connections within 60 s:\n${output.join('').slice(-2000)}`);
  };

  const stop = async (mode: 'fast' | 'immediate' = 'fast') => {
    const child = server;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill(mode === 'fast' ? 'SIGINT' : 'SIGQUIT');
    await exited;
    server = null;
  };

  await start();
  return {
    url,
    port,
    start,
    stop,
    get running() {
      return server !== null;
    },
    async destroy() {
      await stop('fast');
      rmSync(dir, { recursive: true, force: true });
    },
    log: () => output.join(''),
  };
}

async function accepts(url: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 1000 });
  client.on('error', () => {});
  try {
    await client.connect();
    await client.query('SELECT 1');
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => {});
  }
}

/**
 * Signs in to `server` over TCP as `user` with `password`: true when it accepts, false when it refuses the password
 * (28P01: a wrong password, a role past its VALID UNTIL or one that does not exist); any other failure throws.
 */
export async function signsIn(server: PrivatePostgres, user: string, password: string): Promise<boolean> {
  const client = new pg.Client({ host: '127.0.0.1', port: server.port, database: 'postgres', user, password, connectionTimeoutMillis: 5000 });
  client.on('error', () => undefined);
  try {
    await client.connect();
    await client.query('SELECT 1');
    return true;
  } catch (error) {
    if ((error as { code?: string }).code === '28P01') return false;
    throw error;
  } finally {
    await client.end().catch(() => undefined);
  }
}
