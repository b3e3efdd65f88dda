/**
 * Shared pieces of the benchmarks: the machine and commit a result was measured on, appending to
 * bench/RESULTS.md, a fresh PostgreSQL database, and `coffer serve` (the built binary) as a child process.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { appendFileSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { parseAllDocuments } from 'yaml';
import { freePorts } from '../test/support/free-port.ts';

export const REPO = join(import.meta.dirname, '..');
export const RESULTS = join(REPO, 'bench', 'RESULTS.md');

export const log = (message: string) => process.stderr.write(`[bench] ${message}\n`);

export function gitCommit(): string {
  try {
    const commit = execFileSync('git', ['rev-parse', '--short=12', 'HEAD'], { cwd: REPO, encoding: 'utf8' }).trim();
    const dirty = execFileSync('git', ['status', '--porcelain', '--', 'src', 'bench/*.ts', 'package.json'], { cwd: REPO, encoding: 'utf8' }).trim();
    return dirty ? `${commit} (+ uncommitted changes)` : commit;
  } catch {
    return 'unknown';
  }
}

export function loadAverage(): string {
  return os
    .loadavg()
    .map((value) => value.toFixed(2))
    .join(' / ');
}

/** One line describing the machine, for every result. */
export function machine(storage: string): string {
  const cpus = os.cpus();
  const memory = `${(os.totalmem() / 2 ** 30).toFixed(1)} GiB`;
  return `${cpus.length} cores (${cpus[0]?.model.trim() ?? 'unknown'}), ${memory}, Node ${process.version}, ${storage}, commit ${gitCommit()}`;
}

/** Appends a section to bench/RESULTS.md (created with a header if missing) and prints it. */
export function appendResults(title: string, lines: string[]): void {
  if (!existsSync(RESULTS)) writeFileSync(RESULTS, '# Benchmark results\n\nAppended by `npm run bench:*` (see bench/README.md); newest last.\n');
  const section = [`\n## ${title} — ${new Date().toISOString()}\n`, ...lines, ''].join('\n');
  appendFileSync(RESULTS, section);
  process.stdout.write(section);
}

export function table(header: string[], rows: (string | number)[][]): string[] {
  return [`| ${header.join(' | ')} |`, `|${header.map(() => '---').join('|')}|`, ...rows.map((row) => `| ${row.join(' | ')} |`)];
}

export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

export const ms = (value: number) => (Number.isFinite(value) ? value.toFixed(value < 10 ? 2 : 1) : 'n/a');

// ---------------------------------------------------------------------------------------------
// PostgreSQL

export const POSTGRES_ADMIN_URL = process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

export function databaseUrl(name: string): string {
  const url = new URL(POSTGRES_ADMIN_URL);
  url.pathname = `/${name}`;
  return url.toString();
}

async function adminQuery(statement: string) {
  const client = new pg.Client({ connectionString: POSTGRES_ADMIN_URL });
  await client.connect();
  try {
    return await client.query(statement);
  } finally {
    await client.end();
  }
}

/** A fresh, empty database; `drop()` removes it. */
export async function freshDatabase(prefix: string): Promise<{ name: string; url: string; drop(): Promise<void> }> {
  const name = `coffer_bench_${prefix}_${randomBytes(4).toString('hex')}`;
  await adminQuery(`CREATE DATABASE ${name}`);
  return { name, url: databaseUrl(name), drop: async () => void (await adminQuery(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)) };
}

export async function postgresVersion(): Promise<string> {
  const { rows } = await adminQuery('SHOW server_version');
  return `PostgreSQL ${rows[0].server_version}`;
}

/** Transactions committed/rolled back and tuples returned by a database so far (pg_stat_database). */
export async function databaseStats(url: string): Promise<{ xact: number; tuples: number }> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query('SELECT pg_stat_clear_snapshot()');
    const { rows } = await client.query('SELECT xact_commit + xact_rollback AS xact, tup_returned AS tuples FROM pg_stat_database WHERE datname = current_database()');
    return { xact: Number(rows[0].xact), tuples: Number(rows[0].tuples) };
  } finally {
    await client.end();
  }
}

// ---------------------------------------------------------------------------------------------
// coffer serve

export interface Server {
  process: ChildProcess;
  api: string;
  probes: string;
  /** The last lines it printed. */
  tail(): string;
  stop(): Promise<void>;
}

/**
 * Starts the built `coffer serve` of `options.checkout` (default this one) with these settings; resolves once
 * /readyz answers. Output is kept to its last 200 lines.
 */
export async function startServer(
  env: Record<string, string>,
  options: { nodeArgs?: string[]; readyTimeoutMs?: number; command?: 'serve' | 'operator'; checkout?: string } = {},
): Promise<Server> {
  const checkout = options.checkout ?? REPO;
  if (!existsSync(join(checkout, 'dist', 'main.js'))) throw new Error(`${checkout}/dist/ is missing: run \`npm run build\` first`);
  const [port, probePort] = (await freePorts(2)) as [number, number];
  const child = spawn(process.execPath, [...(options.nodeArgs ?? []), join(checkout, 'bin', 'coffer.js'), options.command ?? 'serve'], {
    env: { ...process.env, COFFER_HOST: '127.0.0.1', COFFER_PORT: String(port), COFFER_PROBE_PORT: String(probePort), ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let lines: string[] = [];
  // BENCH_SERVER_LOG: every server's whole output is also appended to this file (the tail below keeps 400 lines)
  const logFile = process.env.BENCH_SERVER_LOG;
  const keep = (chunk: Buffer) => {
    if (logFile) appendFileSync(logFile, chunk);
    lines.push(...String(chunk).split('\n').filter(Boolean));
    if (lines.length > 400) lines = lines.slice(-200);
  };
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  const tail = () => lines.slice(-40).join('\n');
  const server: Server = {
    process: child,
    api: `http://127.0.0.1:${port}`,
    probes: `http://127.0.0.1:${probePort}`,
    tail,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      await exited;
      clearTimeout(timer);
    },
  };
  const deadline = Date.now() + (options.readyTimeoutMs ?? 120_000);
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`coffer serve exited with ${child.exitCode}:\n${tail()}`);
    if (
      await fetch(`${server.probes}/readyz`)
        .then((response) => response.ok)
        .catch(() => false)
    )
      return server;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  child.kill('SIGKILL');
  throw new Error(`coffer serve was not ready in time:\n${tail()}`);
}

/**
 * The NODE_OPTIONS of the Deployment `checkout` ships (deploy/server/, or deploy/ in commits before it moved), the V8
 * heap sized for its memory limit.
 */
function shippedNodeOptions(checkout: string): { value: string; file: string } {
  const file = ['deploy/server/deployment.yaml', 'deploy/deployment.yaml'].find((candidate) => existsSync(join(checkout, candidate)));
  if (!file) return { value: '', file: 'no Deployment manifest' };
  const documents = parseAllDocuments(readFileSync(join(checkout, file), 'utf8')).map((document) => document.toJS());
  const deployment = documents.find((document) => document?.kind === 'Deployment');
  const env: { name: string; value?: string }[] = deployment?.spec?.template?.spec?.containers?.[0]?.env ?? [];
  return { value: env.find((entry) => entry.name === 'NODE_OPTIONS')?.value ?? '', file };
}

/**
 * The NODE_OPTIONS a bench gives the server it measures: the shipped Deployment's (of `checkout`: this one by
 * default), unless BENCH_NODE_OPTIONS overrides them ('' = Node's defaults); `described` says which, for the results.
 */
export function benchNodeOptions(checkout = REPO): { value: string; described: string } {
  const override = process.env.BENCH_NODE_OPTIONS;
  const { value, file } = override === undefined ? shippedNodeOptions(checkout) : { value: override, file: undefined };
  const from = file === undefined ? ' (BENCH_NODE_OPTIONS)' : ` (as shipped in ${file})`;
  return { value, described: `NODE_OPTIONS ${value ? `\`${value}\`` : 'unset'}${from}` };
}

/** CPU time a process has used so far, user and system (Linux /proc, in clock ticks of 1/100 s), in seconds. */
export function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/**
 * CPU seconds so far of each backend of the local PostgreSQL serving `database`, by pid (Linux /proc; the bench
 * runs beside the server). A backend that ends between two readings takes its time with it.
 */
export async function backendCpuSeconds(database: string): Promise<Map<number, number>> {
  const { rows } = await adminQuery(`SELECT pid FROM pg_stat_activity WHERE datname = '${database.replaceAll("'", "''")}'`);
  const seconds = new Map<number, number>();
  for (const { pid } of rows as { pid: number }[]) {
    try {
      seconds.set(pid, cpuSeconds(pid));
    } catch {
      // ended since it was listed
    }
  }
  return seconds;
}

/** The CPU seconds the backends spent between two readings of backendCpuSeconds. */
export function backendCpuSpent(before: Map<number, number>, after: Map<number, number>): number {
  let spent = 0;
  for (const [pid, seconds] of after) spent += seconds - (before.get(pid) ?? 0);
  return spent;
}

/** Resident set size of a process (Linux /proc), in MiB. */
export function rssMiB(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? Number.NaN);
  return kb / 1024;
}

/** A JSON request to the API: its status (ok: 2xx) and body as text, whatever the status. */
export async function apiRequest(
  server: Server,
  method: string,
  path: string,
  token: string | undefined,
  body?: unknown,
): Promise<{ ok: boolean; status: number; text: string }> {
  const response = await fetch(`${server.api}${path}`, {
    method,
    headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { ok: response.ok, status: response.status, text: await response.text() };
}

/** JSON call to the API; throws on a non-2xx answer. */
export async function call(server: Server, method: string, path: string, token: string | undefined, body?: unknown): Promise<any> {
  const { ok, status, text } = await apiRequest(server, method, path, token, body);
  if (!ok) throw new Error(`${method} ${path} → ${status} ${text.slice(0, 500)}`);
  return text ? JSON.parse(text) : undefined;
}

export function serverKeys(): Record<string, string> {
  return { COFFER_ENCRYPTION_KEY: randomBytes(32).toString('base64'), COFFER_AUTH_SECRET: randomBytes(48).toString('base64') };
}

/**
 * Bootstraps the instance and returns the admin identity's token and a machine identity that is an
 * org `member` with the project role `member` (Developer), logged in with universal auth: the
 * usual CI/workload caller, whose every request goes through the project permission check.
 */
export async function bootstrapWithMember(server: Server, projectName: string) {
  const boot = await call(server, 'POST', '/api/v1/admin/bootstrap', undefined, {
    email: 'bench@example.com',
    password: 'a long benchmark password',
    organization: 'Bench',
  });
  const adminToken: string = boot.identity.credentials.token;
  const orgId: string = boot.organization.id;
  const { project } = await call(server, 'POST', '/api/v2/workspace', adminToken, { projectName });
  const { identity } = await call(server, 'POST', '/api/v1/identities', adminToken, { name: 'bench-ci', organizationId: orgId, role: 'member' });
  await call(server, 'POST', `/api/v2/workspace/${project.id}/identity-memberships/${identity.id}`, adminToken, { roles: [{ role: 'member' }] });
  const { identityUniversalAuth } = await call(server, 'POST', `/api/v1/auth/universal-auth/identities/${identity.id}`, adminToken, {});
  const { clientSecret } = await call(server, 'POST', `/api/v1/auth/universal-auth/identities/${identity.id}/client-secrets`, adminToken, {});
  const login = await call(server, 'POST', '/api/v1/auth/universal-auth/login', undefined, { clientId: identityUniversalAuth.clientId, clientSecret });
  return { adminToken, orgId, projectId: project.id as string, memberToken: login.accessToken as string };
}
