import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, posix, relative } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { freePorts } from '../support/free-port.ts';

/**
 * The container image's steps without a Docker engine: the files the Dockerfile's runtime stages
 * copy, a clean `npm ci --omit=dev` (production dependencies only), then its ENTRYPOINT + CMD
 * (`node bin/coffer.js serve`) with its ENV must answer /readyz — writing nothing outside the data
 * directory (the image runs with a read-only root filesystem).
 *
 * dist/ comes from `npm run build` (the test script builds first), standing in for the build stage.
 * The production install needs the npm registry (or a warm npm cache).
 */
const ROOT = join(import.meta.dirname, '../..');
const run = promisify(execFile);

/** What this test copies into the install directory, as the Dockerfile does (checked below). */
const COPIED = ['package.json', 'package-lock.json', 'bin', 'migrations', 'dist'];

interface Instruction {
  stage: string;
  keyword: string;
  args: string;
}

/** The Dockerfile's instructions (continuation lines joined, comments dropped), tagged with their stage. */
function parseDockerfile(text: string): Instruction[] {
  const logical = text
    .split('\n')
    .filter((line) => !/^\s*#/.test(line))
    .join('\n')
    .replace(/\\\n/g, ' ')
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean);
  const instructions: Instruction[] = [];
  let stage = '';
  let index = 0;
  for (const line of logical) {
    const [, keyword, args] = /^(\S+)\s*(.*)$/.exec(line)!;
    const upper = keyword!.toUpperCase();
    if (upper === 'FROM') {
      stage = / AS (\S+)$/i.exec(args!)?.[1] ?? `stage-${index}`;
      index++;
    }
    instructions.push({ stage, keyword: upper, args: args! });
  }
  return instructions;
}

interface Copy {
  stage: string;
  from?: string;
  sources: string[];
  destination: string;
}

function copies(instructions: Instruction[]): Copy[] {
  return instructions
    .filter((instruction) => instruction.keyword === 'COPY')
    .map(({ stage, args }) => {
      const words = args.split(/\s+/);
      const from = words.find((word) => word.startsWith('--from='))?.slice('--from='.length);
      const paths = words.filter((word) => !word.startsWith('--'));
      return { stage, from, sources: paths.slice(0, -1), destination: paths.at(-1)! };
    });
}

const dockerfile = parseDockerfile(readFileSync(join(ROOT, 'Dockerfile'), 'utf8'));
const stages = [...new Set(dockerfile.map((instruction) => instruction.stage))];
const finalStage = stages.at(-1)!;
const finalInstructions = dockerfile.filter((instruction) => instruction.stage === finalStage);
const jsonArray = (keyword: string) => JSON.parse(finalInstructions.find((instruction) => instruction.keyword === keyword)!.args) as string[];

describe('the Dockerfile', () => {
  test('copies into the runtime image exactly what this test installs from', () => {
    const runtimeCopies = copies(dockerfile).filter((copy) => copy.stage === finalStage);
    const fromContext = runtimeCopies.filter((copy) => !copy.from).flatMap((copy) => copy.sources);
    // node_modules comes from the deps stage's `npm ci --omit=dev`; dist from the build stage.
    const fromStages = runtimeCopies.filter((copy) => copy.from);
    expect(fromStages.map((copy) => [copy.from, copy.sources.map((source) => posix.basename(source))])).toEqual(
      expect.arrayContaining([
        ['deps', ['node_modules']],
        ['build', ['dist']],
      ]),
    );
    expect(fromStages).toHaveLength(2);
    // the deps stage installs from the manifest and the lock file only
    const depsCopies = copies(dockerfile).filter((copy) => copy.stage === 'deps');
    expect(depsCopies.flatMap((copy) => copy.sources).sort()).toEqual(['package-lock.json', 'package.json']);
    const depsInstall = dockerfile.filter((instruction) => instruction.stage === 'deps' && instruction.keyword === 'RUN');
    expect(depsInstall.map((instruction) => instruction.args).join(' ')).toMatch(/npm ci --omit=dev/);
    expect(new Set([...fromContext, ...depsCopies.flatMap((copy) => copy.sources), 'dist'])).toEqual(new Set(COPIED));
  });

  test('builds dist/ the way `npm run build` does, from sources the build context keeps', () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<'build' | 'build:server' | 'build:console', string> };
    const build = dockerfile.filter((instruction) => instruction.stage === 'build');
    const run = build.find((instruction) => instruction.keyword === 'RUN' && instruction.args.includes('tsc'))!.args;
    // `npm run build` is the server's build (tsc, then the Kubernetes client's bundle) and the console's (vite): the image runs all three
    expect(pkg.scripts.build).toBe('npm run build:server && npm run build:console');
    const [tsc, bundle, ...more] = pkg.scripts['build:server'].split(' && ');
    expect(tsc).toMatch(/^tsc /);
    expect(bundle).toBe('node scripts/bundle-client-node.ts');
    expect(more).toEqual([]);
    expect(run).toContain(`node_modules/.bin/${tsc} && ${bundle} && node_modules/.bin/${pkg.scripts['build:console']}`);
    const buildSources = copies(dockerfile)
      .filter((copy) => copy.stage === 'build' && !copy.from)
      .flatMap((copy) => copy.sources);
    expect(buildSources).toEqual(
      expect.arrayContaining(['package.json', 'package-lock.json', 'tsconfig.json', 'tsconfig.build.json', 'src', 'console', 'scripts/bundle-client-node.ts']),
    );
    // .dockerignore excludes everything but these: each copied source must be let through.
    const allowed = readFileSync(join(ROOT, '.dockerignore'), 'utf8')
      .split('\n')
      .filter((line) => line.startsWith('!'))
      .map((line) => line.slice(1).replace(/\/$/, ''));
    const contextSources = copies(dockerfile)
      .filter((copy) => !copy.from)
      .flatMap((copy) => copy.sources);
    for (const source of contextSources) expect(allowed, `.dockerignore lets ${source} through`).toContain(source);
  });

  test('runs `coffer serve` as uid 10001 with a /data volume, Node 24 pinned, OCI labels, both ports', () => {
    expect(jsonArray('ENTRYPOINT')).toEqual(['node', 'bin/coffer.js']);
    expect(jsonArray('CMD')).toEqual(['serve']);
    expect(finalInstructions.find((instruction) => instruction.keyword === 'USER')!.args).toBe('10001:10001');
    expect(jsonArray('VOLUME')).toEqual(['/data']);
    expect(finalInstructions.find((instruction) => instruction.keyword === 'EXPOSE')!.args).toBe('8080 8081');
    const env = dockerEnv();
    expect(env).toMatchObject({ COFFER_HOST: '0.0.0.0', COFFER_DATA_DIR: '/data', NODE_ENV: 'production' });
    const image = /^ARG NODE_IMAGE=(\S+)$/m.exec(readFileSync(join(ROOT, 'Dockerfile'), 'utf8'))![1]!;
    expect(image).toMatch(/^node:24\.\d+\.\d+-[a-z]+-slim$/);
    const labels = finalInstructions
      .filter((instruction) => instruction.keyword === 'LABEL')
      .map((instruction) => instruction.args)
      .join(' ');
    for (const label of ['title', 'description', 'version', 'source', 'licenses']) expect(labels).toContain(`org.opencontainers.image.${label}=`);
  });
});

/** The runtime stage's ENV (KEY=value pairs). */
function dockerEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const instruction of finalInstructions.filter((entry) => entry.keyword === 'ENV')) {
    for (const [, key, value] of instruction.args.matchAll(/(\w+)=("[^"]*"|\S+)/g)) env[key!] = value!.replace(/^"|"$/g, '');
  }
  return env;
}

/** The JavaScript files below dir. */
function jsFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.js'))
    .map((entry) => join(entry.parentPath, entry.name));
}

/** Every file below dir (relative paths), skipping `skip`, with sizes and mtimes: what a write would change. */
function snapshot(dir: string, skip: string): Map<string, string> {
  const files = new Map<string, string>();
  const walk = (current: string) => {
    for (const entry of readdirSync(current, { withFileTypes: true })) {
      const path = join(current, entry.name);
      if (path === skip) continue;
      const stat = statSync(path);
      files.set(relative(dir, path), entry.isDirectory() ? 'dir' : `${stat.size}:${stat.mtimeMs}`);
      if (entry.isDirectory()) walk(path);
    }
  };
  walk(dir);
  return files;
}

describe('production install, started as the image starts it', () => {
  const work = mkdtempSync(join(tmpdir(), 'coffer-image-'));
  const app = join(work, 'app');
  const data = join(work, 'data');
  let child: ChildProcess | undefined;
  const output: string[] = [];

  beforeAll(async () => {
    if (!existsSync(join(ROOT, 'dist/main.js'))) throw new Error('dist/ is missing: run `npm run build` first');
    for (const path of COPIED) cpSync(join(ROOT, path), join(app, path), { recursive: true });
    // npm from the machine; the project's own `node` (a dev dependency) is not installed by --omit=dev.
    await run('npm', ['ci', '--omit=dev', '--no-audit', '--no-fund'], {
      cwd: app,
      env: { ...process.env, npm_config_update_notifier: 'false' },
      maxBuffer: 16 * 1024 * 1024,
    });
  }, 300_000);

  afterAll(async () => {
    if (child && child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((resolve) => child!.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    }
    rmSync(work, { recursive: true, force: true });
  });

  test('imports the Kubernetes client as the build bundled it: the values src/kubernetes/client-node.ts names, not the package index', async () => {
    // the package's index loads every API group (scripts/bundle-client-node.ts): no built module imports it
    const importers = jsFiles(join(app, 'dist')).filter((file) => /from\s*["']@kubernetes\/client-node(\/[^"']*)?["']/.test(readFileSync(file, 'utf8')));
    expect(importers).toEqual([]);
    const named = /export \{([^}]+)\} from '@kubernetes\/client-node'/.exec(readFileSync(join(ROOT, 'src/kubernetes/client-node.ts'), 'utf8'))![1]!;
    const wanted = named
      .split(',')
      .map((name) => name.trim())
      .filter(Boolean)
      .sort();
    // on the production install (its dependencies only), the bundle loads and a client works from a kubeconfig
    const bundle = pathToFileURL(join(app, 'dist/kubernetes/client-node.js')).href;
    const script = `const m = await import(${JSON.stringify(bundle)});
      const config = new m.KubeConfig();
      config.loadFromClusterAndUser({ name: 'c', server: 'https://127.0.0.1:6443', skipTLSVerify: false }, { name: 'u', token: 't' });
      const core = config.makeApiClient(m.CoreV1Api);
      console.log(JSON.stringify({ exports: Object.keys(m).sort(), client: typeof core.readNamespacedSecret }));`;
    const { stdout } = await run('node', ['--input-type=module', '-e', script], { cwd: app });
    expect(JSON.parse(stdout)).toEqual({ exports: wanted, client: 'function' });
  });

  test('holds production dependencies only', () => {
    const lock = JSON.parse(readFileSync(join(app, 'package-lock.json'), 'utf8')) as {
      packages: Record<string, { dev?: boolean; optional?: boolean }>;
    };
    const installed = (name: string) => existsSync(join(app, 'node_modules', name, 'package.json'));
    const pkg = JSON.parse(readFileSync(join(app, 'package.json'), 'utf8')) as { dependencies: Record<string, string>; devDependencies: Record<string, string> };
    for (const name of Object.keys(pkg.dependencies)) expect(installed(name), `${name} installed`).toBe(true);
    // dev dependencies (some, like @types/node, are also needed by production packages: the lock decides)
    for (const name of ['node', 'typescript', 'vitest', 'testcontainers']) {
      expect(pkg.devDependencies[name], `${name} is a dev dependency`).toBeDefined();
      expect(installed(name), `dev dependency ${name} not installed`).toBe(false);
    }
    const devOnly = Object.entries(lock.packages).filter(([path, entry]) => path.startsWith('node_modules/') && entry.dev);
    expect(devOnly.length).toBeGreaterThan(0);
    for (const [path] of devOnly) expect(existsSync(join(app, path)), `${path} (dev) absent`).toBe(false);
  });

  test('`node bin/coffer.js serve` with the image ENV answers /readyz, writing only to the data dir', async () => {
    mkdirSync(join(work, 'tmp'));
    const before = snapshot(app, data);
    const [port, probePort] = (await freePorts(2)) as [number, number];
    const [entry, ...entryArgs] = jsonArray('ENTRYPOINT');
    expect(entry).toBe('node');
    // `node` in the image is Node 24: here it is this test's own Node 24.
    expect(process.versions.node.split('.')[0]).toBe('24');
    child = spawn(process.execPath, [...entryArgs, ...jsonArray('CMD')], {
      cwd: app,
      env: {
        PATH: process.env.PATH,
        // the image's HOME (/nonexistent) and root filesystem are not writable: nothing may land there
        HOME: join(work, 'home-never-created'),
        TMPDIR: join(work, 'tmp'),
        ...dockerEnv(),
        COFFER_DATA_DIR: data,
        COFFER_PORT: String(port),
        COFFER_PROBE_PORT: String(probePort),
        COFFER_OPERATOR: 'false',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout!.on('data', (chunk) => output.push(String(chunk)));
    child.stderr!.on('data', (chunk) => output.push(String(chunk)));
    const deadline = Date.now() + 60_000;
    let ready: Response | undefined;
    while (Date.now() < deadline && child.exitCode === null) {
      ready = await fetch(`http://127.0.0.1:${probePort}/readyz`).catch(() => undefined);
      if (ready?.status === 200) break;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    expect(ready?.status, output.join('')).toBe(200);
    expect(await ready!.json()).toEqual({ status: 'ready' });
    expect((await fetch(`http://127.0.0.1:${port}/api/status`)).status).toBe(200);
    // listening on every interface, as COFFER_HOST=0.0.0.0 asks
    expect(output.join('')).toContain('0.0.0.0');
    expect(readdirSync(data).length).toBeGreaterThan(0);
    expect(snapshot(app, data)).toEqual(before);
    expect(existsSync(join(work, 'home-never-created'))).toBe(false);
  });
});
