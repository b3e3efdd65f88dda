/**
 * A real Kubernetes control plane for the test suite: etcd → kube-apiserver → kube-controller-manager
 * (garbage collector + namespace controller), all on 127.0.0.1 ephemeral ports, in a throwaway
 * temp dir. Binaries come from scripts/k8s-testbin.sh (built from Go modules into a cache dir
 * outside the repo). See test/README.md.
 *
 * Used once per test run by test/k8s/global-setup.ts; usable on its own too:
 *   const cp = await startControlPlane({ binDir: await ensureTestBinaries() });
 *   ...; await cp.stop();
 * An apiserver outage: `await cp.stopApiserver(); ...; await cp.startApiserver();` (etcd keeps its data).
 */
import { spawn, execFile, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { mkdtemp, open, readFile, rm, writeFile } from 'node:fs/promises';
import https from 'node:https';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { parseAllDocuments } from 'yaml';
import { freePorts } from '../support/free-port.ts';

const execFileP = promisify(execFile);

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
/** Directories whose *.yaml / *.yml CustomResourceDefinitions are installed at start. */
export const DEFAULT_CRD_DIRS = [path.join(REPO_ROOT, 'crds'), path.join(REPO_ROOT, 'test', 'k8s', 'fixtures')];

export interface KubeTokens {
  /** bearer token of user `admin` (group system:masters) */
  admin: string;
  /** bearer token of user `operator` (only system:authenticated: RBAC applies) */
  operator: string;
}

export interface ControlPlane {
  /** temp dir with certs, kubeconfig, etcd data and the *.log files */
  dir: string;
  /** kubeconfig with contexts `admin` (current) and `operator` */
  kubeconfigPath: string;
  /** https://127.0.0.1:<port> */
  server: string;
  /** PEM of the CA that signed the apiserver's serving cert */
  caPem: string;
  tokens: KubeTokens;
  /** names of the CRDs installed (and Established) at start */
  crds: string[];
  /** milliseconds from startControlPlane() call to each milestone */
  timings: Record<string, number>;
  /**
   * Stops everything (SIGTERM, then SIGKILL after a grace period) and deletes `dir`
   * unless keepDir (or COFFER_KEEP_CLUSTER_LOGS=1); returns whether the dir was kept.
   */
  stop(opts?: { keepDir?: boolean }): Promise<boolean>;
  /** Stops the kube-apiserver alone (SIGTERM): clients are refused until startApiserver(); etcd and its data stay. */
  stopApiserver(): Promise<void>;
  /** Starts the kube-apiserver again on the same port, with the same flags and etcd; resolves once /readyz answers. */
  startApiserver(): Promise<void>;
}

export interface StartOptions {
  /** directory with etcd, kube-apiserver, kube-controller-manager */
  binDir: string;
  /** directories to load CRDs from (default DEFAULT_CRD_DIRS; missing ones are skipped) */
  crdDirs?: string[];
  /** start kube-controller-manager (default true) */
  controllerManager?: boolean;
  /** timeout for each readiness wait (default 120 s: the apiserver needs ~10-30 s on 2 cores) */
  readyTimeoutMs?: number;
  /** progress messages (default: none) */
  log?: (msg: string) => void;
  /** serve /debug/pprof on the apiserver (benchmarks' profiles; default false) */
  profiling?: boolean;
}

const keepLogsByEnv = () => /^(1|true|yes)$/i.test(process.env.COFFER_KEEP_CLUSTER_LOGS ?? '');

// ---------------------------------------------------------------------------------------------
// Binaries

/**
 * Runs scripts/k8s-testbin.sh (idempotent: exits at once when the binaries are cached) and returns
 * the directory holding them. Build output is forwarded to stderr. Throws with the reason when Go
 * is missing or the build fails: the cluster tests must never be skipped silently.
 */
export async function ensureTestBinaries(opts: { log?: (msg: string) => void } = {}): Promise<string> {
  const script = path.join(REPO_ROOT, 'scripts', 'k8s-testbin.sh');
  if (!existsSync(script)) throw new Error(`control plane: ${script} is missing`);
  const child = spawn('bash', [script], { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let errTail = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
  child.stderr.setEncoding('utf8').on('data', (d: string) => {
    process.stderr.write(d);
    errTail = (errTail + d).slice(-4000);
  });
  const t0 = Date.now();
  const slow = setTimeout(() => opts.log?.('building the Kubernetes test binaries (first run on this machine: ~15-30 min) ...'), 3000);
  const code = await new Promise<number | null>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (c) => resolve(c));
  }).finally(() => clearTimeout(slow));
  if (code !== 0) {
    throw new Error(`control plane: scripts/k8s-testbin.sh failed (exit ${code}) after ${Date.now() - t0} ms, ` + `so the cluster tests cannot run.\n${errTail.trim()}`);
  }
  const dir = out.trim().split('\n').pop()?.trim() ?? '';
  for (const b of ['etcd', 'kube-apiserver', 'kube-controller-manager']) {
    if (!dir || !existsSync(path.join(dir, b))) {
      throw new Error(`control plane: scripts/k8s-testbin.sh succeeded but ${dir || '(no dir printed)'}/${b} is missing`);
    }
  }
  return dir;
}

// ---------------------------------------------------------------------------------------------
// Child processes (killed on stop, on process exit and on SIGINT/SIGTERM)

interface Proc {
  name: string;
  child: ChildProcess;
  logPath: string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  exitInfo?: { code: number | null; signal: NodeJS.Signals | null };
}

const live = new Set<Proc>();
const liveDirs = new Set<string>();
let handlersInstalled = false;

function killAllSync(): void {
  for (const p of live) {
    try {
      p.child.kill('SIGKILL');
    } catch {
      /* already gone */
    }
  }
  live.clear();
  for (const d of liveDirs) {
    if (keepLogsByEnv()) {
      markKept(d);
      process.stderr.write(`control plane: interrupted; logs kept in ${d}\n`);
    } else {
      try {
        rmSync(d, { recursive: true, force: true });
      } catch {
        /* best effort */
      }
    }
  }
  liveDirs.clear();
}

function installExitHandlers(): void {
  if (handlersInstalled) return;
  handlersInstalled = true;
  process.on('exit', killAllSync);
  for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    const onSignal = () => {
      killAllSync();
      // If nobody else (e.g. vitest) handles the signal, restore the default behaviour: die by it.
      if (process.listenerCount(sig) === 0) process.kill(process.pid, sig);
    };
    process.once(sig, onSignal);
  }
}

// Temp dirs: `owner.pid` names the test process; `KEPT` marks a dir kept on purpose (failed test,
// COFFER_KEEP_CLUSTER_LOGS=1). A dir whose owner died without cleaning up (SIGKILL) and that is not
// marked KEPT is removed when the next control plane starts.
const DIR_PREFIX = 'coffer-k8s-';

function markKept(dir: string): void {
  try {
    writeFileSync(path.join(dir, 'KEPT'), `${new Date().toISOString()}\n`);
  } catch {
    /* best effort */
  }
}

function sweepStaleDirs(): void {
  let entries: string[];
  try {
    entries = readdirSync(os.tmpdir()).filter((e) => e.startsWith(DIR_PREFIX));
  } catch {
    return;
  }
  for (const e of entries) {
    const dir = path.join(os.tmpdir(), e);
    try {
      if (existsSync(path.join(dir, 'KEPT'))) continue;
      const pid = Number(readFileSync(path.join(dir, 'owner.pid'), 'utf8'));
      if (!Number.isInteger(pid) || pid <= 0 || pid === process.pid) continue;
      try {
        process.kill(pid, 0);
        continue; // owner alive
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ESRCH') continue;
      }
      rmSync(dir, { recursive: true, force: true });
    } catch {
      /* not ours or unreadable: leave it */
    }
  }
}

// Linux: ask the kernel to SIGKILL the child if this process dies without cleaning up (e.g. SIGKILL).
let setprivOk: boolean | undefined;
function pdeathsigPrefix(): string[] {
  if (setprivOk === undefined) {
    setprivOk = false;
    if (process.platform === 'linux') {
      for (const p of ['/usr/bin/setpriv', '/bin/setpriv']) {
        if (existsSync(p)) {
          setprivOk = true;
          break;
        }
      }
    }
  }
  return setprivOk ? ['setpriv', '--pdeathsig', 'SIGKILL', '--'] : [];
}

async function startProc(name: string, bin: string, args: string[], dir: string): Promise<Proc> {
  const logPath = path.join(dir, `${name}.log`);
  const fh = await open(logPath, 'a');
  await fh.write(`# ${new Date().toISOString()} ${bin} ${args.join(' ')}\n`);
  const [cmd, ...pre] = [...pdeathsigPrefix(), bin];
  const child = spawn(cmd, [...pre, ...args], {
    cwd: dir,
    stdio: ['ignore', fh.fd, fh.fd],
  });
  await fh.close(); // the child has its own copy of the fd
  const proc: Proc = {
    name,
    child,
    logPath,
    exited: new Promise((resolve) => {
      child.on('exit', (code, signal) => {
        proc.exitInfo = { code, signal };
        live.delete(proc);
        resolve({ code, signal });
      });
      child.on('error', (err) => {
        proc.exitInfo = { code: -1, signal: null };
        live.delete(proc);
        void appendFileSafe(logPath, `spawn error: ${err.message}\n`);
        resolve({ code: -1, signal: null });
      });
    }),
  };
  live.add(proc);
  return proc;
}

async function appendFileSafe(p: string, s: string) {
  try {
    await writeFile(p, s, { flag: 'a' });
  } catch {
    /* ignore */
  }
}

async function stopProc(p: Proc, graceMs: number): Promise<void> {
  if (p.exitInfo) return;
  p.child.kill('SIGTERM');
  const timer = new Promise<'timeout'>((r) => setTimeout(() => r('timeout'), graceMs).unref());
  if ((await Promise.race([p.exited, timer])) === 'timeout') {
    await appendFileSafe(p.logPath, `# SIGTERM grace of ${graceMs} ms exceeded; sending SIGKILL\n`);
    p.child.kill('SIGKILL');
    await p.exited;
  }
}

function tail(file: string, lines = 25): string {
  try {
    return readFileSync(file, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '(no log)';
  }
}

// ---------------------------------------------------------------------------------------------
// Small utilities

interface HttpResult {
  status: number;
  body: string;
}

function request(url: string, opts: { ca?: string; token?: string; timeoutMs?: number; method?: string; json?: unknown } = {}): Promise<HttpResult> {
  return new Promise((resolve, reject) => {
    const u = new URL(url);
    const mod = u.protocol === 'https:' ? https : http;
    const payload = opts.json === undefined ? undefined : JSON.stringify(opts.json);
    const headers: Record<string, string> = { accept: 'application/json' };
    if (opts.token) headers.authorization = `Bearer ${opts.token}`;
    if (payload !== undefined) headers['content-type'] = 'application/json';
    const req = mod.request(u, { method: opts.method ?? 'GET', ca: opts.ca, headers, timeout: opts.timeoutMs ?? 5000, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('timeout', () => req.destroy(new Error(`request timed out after ${opts.timeoutMs ?? 5000} ms`)));
    req.on('error', reject);
    req.end(payload);
  });
}

/**
 * Polls `check` until it returns true. Throws a descriptive error on timeout, or at once when one of
 * `procs` exits (with the tail of its log).
 */
async function waitUntil(description: string, check: () => Promise<boolean | string>, opts: { timeoutMs: number; intervalMs?: number; procs?: Proc[] }): Promise<void> {
  const deadline = Date.now() + opts.timeoutMs;
  let last = 'not checked yet';
  for (;;) {
    for (const p of opts.procs ?? []) {
      if (p.exitInfo) {
        throw new Error(
          `control plane: ${p.name} exited (code ${p.exitInfo.code}, signal ${p.exitInfo.signal}) ` +
            `while waiting for ${description}. Log ${p.logPath}:\n${tail(p.logPath)}`,
        );
      }
    }
    try {
      const r = await check();
      if (r === true) return;
      last = typeof r === 'string' ? r : String(r);
    } catch (err) {
      last = err instanceof Error ? err.message : String(err);
    }
    if (Date.now() > deadline) {
      const logs = (opts.procs ?? []).map((p) => `--- ${p.logPath}:\n${tail(p.logPath)}`).join('\n');
      throw new Error(`control plane: timed out after ${opts.timeoutMs} ms waiting for ${description}; last: ${last}\n${logs}`);
    }
    await new Promise((r) => setTimeout(r, opts.intervalMs ?? 250));
  }
}

async function sh(cmd: string, args: string[], cwd: string): Promise<void> {
  try {
    await execFileP(cmd, args, { cwd });
  } catch (err) {
    const e = err as { stderr?: string; message: string };
    throw new Error(`control plane: ${cmd} ${args.join(' ')} failed: ${e.stderr || e.message}`, { cause: err });
  }
}

/** A throwaway CA, a serving cert for 127.0.0.1/localhost and a service-account key pair. */
async function makeCerts(dir: string): Promise<void> {
  const ec = ['genpkey', '-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-256'];
  await sh('openssl', [...ec, '-out', 'ca.key'], dir);
  await sh(
    'openssl',
    [
      'req',
      '-x509',
      '-new',
      '-key',
      'ca.key',
      '-subj',
      '/CN=coffer-test-ca',
      '-days',
      '2',
      '-out',
      'ca.crt',
      '-addext',
      'basicConstraints=critical,CA:TRUE',
      '-addext',
      'keyUsage=critical,keyCertSign,cRLSign',
    ],
    dir,
  );
  await sh('openssl', [...ec, '-out', 'apiserver.key'], dir);
  await sh('openssl', ['req', '-new', '-key', 'apiserver.key', '-subj', '/CN=kube-apiserver', '-out', 'apiserver.csr'], dir);
  await writeFile(
    path.join(dir, 'apiserver.ext'),
    'basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=serverAuth\n' + 'subjectAltName=IP:127.0.0.1,DNS:localhost\n',
  );
  await sh(
    'openssl',
    ['x509', '-req', '-in', 'apiserver.csr', '-CA', 'ca.crt', '-CAkey', 'ca.key', '-CAcreateserial', '-days', '2', '-extfile', 'apiserver.ext', '-out', 'apiserver.crt'],
    dir,
  );
  await sh('openssl', [...ec, '-out', 'sa.key'], dir);
  await sh('openssl', ['pkey', '-in', 'sa.key', '-pubout', '-out', 'sa.pub'], dir);
}

function kubeconfigYaml(server: string, caPem: string, tokens: KubeTokens): string {
  const ca = Buffer.from(caPem).toString('base64');
  return `apiVersion: v1
kind: Config
clusters:
- name: coffer-test
  cluster:
    server: ${server}
    certificate-authority-data: ${ca}
users:
- name: admin
  user:
    token: ${tokens.admin}
- name: operator
  user:
    token: ${tokens.operator}
contexts:
- name: admin
  context: {cluster: coffer-test, user: admin, namespace: default}
- name: operator
  context: {cluster: coffer-test, user: operator, namespace: default}
current-context: admin
`;
}

interface CrdDoc {
  apiVersion: string;
  kind: string;
  metadata: { name: string };
  spec: { group: string; names: { plural: string }; versions: { name: string; served?: boolean }[] };
}

/** CustomResourceDefinitions in *.yaml / *.yml files of the given directories (missing dirs: none). */
export function loadCrds(dirs: string[]): { file: string; crd: CrdDoc }[] {
  const found: { file: string; crd: CrdDoc }[] = [];
  for (const dir of dirs) {
    if (!existsSync(dir) || !statSync(dir).isDirectory()) continue;
    for (const f of readdirSync(dir).sort()) {
      if (!/\.ya?ml$/.test(f)) continue;
      const file = path.join(dir, f);
      for (const doc of parseAllDocuments(readFileSync(file, 'utf8'))) {
        if (doc.errors.length) throw new Error(`control plane: ${file}: ${doc.errors[0]!.message}`);
        const obj = doc.toJS() as CrdDoc | null;
        if (obj?.kind === 'CustomResourceDefinition') found.push({ file, crd: obj });
      }
    }
  }
  return found;
}

// ---------------------------------------------------------------------------------------------
// Start

export async function startControlPlane(opts: StartOptions): Promise<ControlPlane> {
  const t0 = Date.now();
  const timings: Record<string, number> = {};
  const mark = (k: string) => (timings[k] = Date.now() - t0);
  const log = opts.log ?? (() => {});
  const timeoutMs = opts.readyTimeoutMs ?? 120_000;
  const bin = (b: string) => {
    const p = path.join(opts.binDir, b);
    if (!existsSync(p)) throw new Error(`control plane: ${p} not found (run scripts/k8s-testbin.sh)`);
    return p;
  };
  const crdDocs = loadCrds(opts.crdDirs ?? DEFAULT_CRD_DIRS);

  installExitHandlers();
  sweepStaleDirs();
  const dir = await mkdtemp(path.join(os.tmpdir(), DIR_PREFIX));
  await writeFile(path.join(dir, 'owner.pid'), String(process.pid));
  liveDirs.add(dir);
  const procs: Proc[] = [];
  let stopped = false;

  const stop = async (o: { keepDir?: boolean } = {}): Promise<boolean> => {
    if (stopped) return true;
    stopped = true;
    const [etcd, ...rest] = procs;
    await Promise.all(rest.map((p) => stopProc(p, 5000)));
    if (etcd) await stopProc(etcd, 5000);
    liveDirs.delete(dir);
    const keep = o.keepDir === true || keepLogsByEnv();
    if (keep) markKept(dir);
    else await rm(dir, { recursive: true, force: true });
    return keep;
  };

  try {
    await makeCerts(dir);
    const caPem = await readFile(path.join(dir, 'ca.crt'), 'utf8');
    const tokens: KubeTokens = { admin: randomBytes(24).toString('hex'), operator: randomBytes(24).toString('hex') };
    await writeFile(path.join(dir, 'tokens.csv'), `${tokens.admin},admin,admin,"system:masters"\n${tokens.operator},operator,operator,"system:authenticated"\n`, {
      mode: 0o600,
    });
    const [etcdPort, peerPort, apiPort] = (await freePorts(3)) as [number, number, number];
    const server = `https://127.0.0.1:${apiPort}`;
    const kubeconfigPath = path.join(dir, 'kubeconfig');
    await writeFile(kubeconfigPath, kubeconfigYaml(server, caPem, tokens), { mode: 0o600 });
    mark('certs');

    // etcd
    const etcdUrl = `http://127.0.0.1:${etcdPort}`;
    const peerUrl = `http://127.0.0.1:${peerPort}`;
    const etcd = await startProc(
      'etcd',
      bin('etcd'),
      [
        '--name=default',
        `--data-dir=${path.join(dir, 'etcd')}`,
        `--listen-client-urls=${etcdUrl}`,
        `--advertise-client-urls=${etcdUrl}`,
        `--listen-peer-urls=${peerUrl}`,
        `--initial-advertise-peer-urls=${peerUrl}`,
        `--initial-cluster=default=${peerUrl}`,
        '--unsafe-no-fsync=true',
        '--log-level=warn',
      ],
      dir,
    );
    procs.push(etcd);
    log(`etcd on ${etcdUrl}`);
    await waitUntil(
      'etcd /health',
      async () => {
        const r = await request(`${etcdUrl}/health`);
        return (r.status === 200 && /"health":\s*"true"/.test(r.body)) || `HTTP ${r.status} ${r.body.slice(0, 200)}`;
      },
      { timeoutMs, procs: [etcd] },
    );
    mark('etcd');

    // kube-apiserver (started again by startApiserver() after stopApiserver(), on the same port and etcd)
    const apiserverArgs = [
      `--etcd-servers=${etcdUrl}`,
      '--bind-address=127.0.0.1',
      `--secure-port=${apiPort}`,
      `--cert-dir=${dir}`,
      `--tls-cert-file=${path.join(dir, 'apiserver.crt')}`,
      `--tls-private-key-file=${path.join(dir, 'apiserver.key')}`,
      `--client-ca-file=${path.join(dir, 'ca.crt')}`,
      `--token-auth-file=${path.join(dir, 'tokens.csv')}`,
      '--authorization-mode=RBAC',
      `--service-account-issuer=${server}`,
      `--service-account-key-file=${path.join(dir, 'sa.pub')}`,
      `--service-account-signing-key-file=${path.join(dir, 'sa.key')}`,
      '--service-cluster-ip-range=10.0.0.0/24',
      '--disable-admission-plugins=ServiceAccount',
      '--allow-privileged=true',
      // No Endpoints for the `kubernetes` Service (the host's address is meaningless here); this also
      // lets the apiserver start on hosts without a default route when an advertise address is given.
      '--endpoint-reconciler-type=none',
      ...(hasDefaultRoute() ? [] : ['--advertise-address=127.0.0.1']),
      `--profiling=${opts.profiling === true}`,
      '--v=1',
    ];
    const launchApiserver = async (): Promise<Proc> => {
      const started = await startProc('kube-apiserver', bin('kube-apiserver'), apiserverArgs, dir);
      procs.push(started);
      log(`kube-apiserver on ${server}`);
      await waitUntil(
        'kube-apiserver /readyz',
        async () => {
          const r = await request(`${server}/readyz`, { ca: caPem, token: tokens.admin });
          return r.status === 200 || `HTTP ${r.status} ${r.body.slice(-300)}`;
        },
        { timeoutMs, procs: [etcd, started] },
      );
      await waitUntil(
        'namespace default',
        async () => {
          const r = await request(`${server}/api/v1/namespaces/default`, { ca: caPem, token: tokens.admin });
          return r.status === 200 || `HTTP ${r.status}`;
        },
        { timeoutMs, procs: [etcd, started] },
      );
      return started;
    };
    let apiserver = await launchApiserver();
    const stopApiserver = async (): Promise<void> => {
      await stopProc(apiserver, 5000);
      if (procs.includes(apiserver)) procs.splice(procs.indexOf(apiserver), 1);
    };
    const startApiserver = async (): Promise<void> => {
      if (!apiserver.exitInfo) throw new Error('control plane: the kube-apiserver is running; call stopApiserver() first');
      apiserver = await launchApiserver();
    };
    mark('apiserver');

    // CRDs (before kube-controller-manager, so its garbage collector discovers them at start)
    // Sent as raw JSON on purpose: @kubernetes/client-node's typed models would silently drop schema
    // keys whose TS names differ (default, enum, x-kubernetes-validations, ...).
    const crds: string[] = [];
    const crdUrl = `${server}/apis/apiextensions.k8s.io/v1/customresourcedefinitions`;
    const auth = { ca: caPem, token: tokens.admin };
    for (const { file, crd } of crdDocs) {
      const r = await request(crdUrl, { ...auth, method: 'POST', json: crd, timeoutMs: 30_000 });
      if (r.status !== 201) {
        throw new Error(`control plane: installing CRD ${crd.metadata?.name} from ${file} failed: HTTP ${r.status} ${r.body}`);
      }
      crds.push(crd.metadata.name);
    }
    await Promise.all(
      crdDocs.map(({ crd }) =>
        waitUntil(
          `CRD ${crd.metadata.name} Established and served`,
          async () => {
            const r = await request(`${crdUrl}/${crd.metadata.name}`, auth);
            if (r.status !== 200) return `HTTP ${r.status}`;
            const got = JSON.parse(r.body) as { status?: { conditions?: { type: string; status: string; message?: string }[] } };
            const est = got.status?.conditions?.find((c) => c.type === 'Established');
            if (est?.status !== 'True') return `Established=${est?.status ?? 'missing'} ${est?.message ?? ''}`;
            for (const v of crd.spec.versions.filter((x) => x.served !== false)) {
              const d = await request(`${server}/apis/${crd.spec.group}/${v.name}`, auth);
              if (d.status !== 200 || !d.body.includes(`"name":"${crd.spec.names.plural}"`)) {
                return `discovery for ${crd.spec.group}/${v.name}: HTTP ${d.status}`;
              }
            }
            return true;
          },
          { timeoutMs, procs: [etcd, apiserver] },
        ),
      ),
    );
    mark('crds');

    // kube-controller-manager: garbage collector + namespace controller only; no HTTPS listener.
    if (opts.controllerManager !== false) {
      const kcm = await startProc(
        'kube-controller-manager',
        bin('kube-controller-manager'),
        [
          `--kubeconfig=${kubeconfigPath}`,
          '--controllers=garbage-collector-controller,namespace-controller',
          '--leader-elect=false',
          '--secure-port=0',
          '--use-service-account-credentials=false',
          '--v=1',
        ],
        dir,
      );
      procs.push(kcm);
      // No health endpoint with --secure-port=0: wait for the garbage collector's own "synced" log line
      // (it has discovered all resources, including the CRDs above, and watches them).
      await waitUntil(
        'kube-controller-manager garbage collector to sync',
        async () =>
          /all resource monitors have synced|Proceeding to collect garbage/.test(await readFile(kcm.logPath, 'utf8')) ||
          'no "Garbage collector: all resource monitors have synced" line in its log yet',
        { timeoutMs, procs: [kcm, apiserver] },
      );
      mark('controller-manager');
    }
    log(`control plane ready in ${Date.now() - t0} ms (${dir})`);

    return { dir, kubeconfigPath, server, caPem, tokens, crds, timings, stop, stopApiserver, startApiserver };
  } catch (err) {
    const kept = await stop({ keepDir: true }).catch(() => true);
    const msg = err instanceof Error ? err.message : String(err);
    throw new Error(`${msg}\n(control plane logs ${kept ? `kept in ${dir}` : 'deleted'})`, { cause: err });
  }
}

function hasDefaultRoute(): boolean {
  try {
    return readFileSync('/proc/net/route', 'utf8')
      .split('\n')
      .slice(1)
      .some((l) => l.split(/\s+/)[1] === '00000000');
  } catch {
    return true; // not Linux: let the apiserver pick
  }
}
