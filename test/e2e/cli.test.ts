import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, test } from 'vitest';
import { readFileSync } from 'node:fs';
import { commands } from '../../src/cli/commands.ts';
import { EXIT } from '../../src/cli/exit-codes.ts';
import { settingsIn } from '../../src/config.ts';
import { VERSION } from '../../src/version.ts';
import { COFFER_BIN, interrupt, startCoffer, stopCoffer } from '../support/coffer-process.ts';
import { README_PATH } from '../support/readme.ts';
import { freePort } from '../support/free-port.ts';
import { adminQuery, databaseUrl } from '../support/postgres-server.ts';

/**
 * The `coffer` command line as a user meets it: help, version, and every
 * kind of failure with the message and exit code README "Exit codes" promises.
 */

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

function coffer(args: string[], env: Record<string, string> = {}): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [COFFER_BIN, ...args],
      { env: { ...process.env, COFFER_OPERATOR: 'false', COFFER_LOG_FORMAT: 'json', ...env }, timeout: 60_000 },
      (error, stdout, stderr) => {
        resolve({ code: error ? (typeof error.code === 'number' ? error.code : -1) : 0, stdout, stderr });
      },
    );
  });
}

const keys = { COFFER_ENCRYPTION_KEY: randomBytes(32).toString('base64'), COFFER_AUTH_SECRET: randomBytes(48).toString('base64') };
let scratch: string;
beforeAll(() => {
  scratch = mkdtempSync(join(tmpdir(), 'coffer-cli-'));
});
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe('help and version', () => {
  test.each([['--version'], ['-v'], ['version']])('coffer %s prints the version', async (arg) => {
    expect(await coffer([arg])).toEqual({ code: 0, stdout: `coffer ${VERSION}\n`, stderr: '' });
  });

  test.each([['--help'], ['help'], ['-h']])('coffer %s lists every command with its summary', async (arg) => {
    const { code, stdout } = await coffer([arg]);
    expect(code).toBe(0);
    for (const command of commands) expect(stdout).toMatch(new RegExp(`\\n  ${command.name} +${command.summary.slice(0, 30).replace(/[()]/g, '\\$&')}`));
    expect(stdout).toContain('Exit codes:');
  });

  test.each(commands.map((command) => [command.name]))('coffer help %s and coffer %s --help show every flag and setting', async (name) => {
    const spec = commands.find((command) => command.name === name)!;
    const viaHelp = await coffer(['help', name]);
    const viaFlag = await coffer([name, '--help']);
    expect(viaHelp.code).toBe(0);
    expect(viaFlag).toEqual(viaHelp);
    expect(viaHelp.stdout).toContain(`Usage: coffer ${name}`);
    for (const flag of spec.flags ?? []) expect(viaHelp.stdout).toContain(flag.flags);
    for (const setting of settingsIn(spec.settings ?? [])) {
      expect(viaHelp.stdout).toContain(`--${setting.flag} <value>`);
      expect(viaHelp.stdout).toContain(setting.env);
    }
  });
});

describe('an older Node.js', () => {
  // the machine's own node (the README's prerequisite is Node.js 20 with npm); npm scripts use the project's Node.js 24
  const systemNode = process.env.COFFER_SYSTEM_NODE ?? '/usr/bin/node';

  test('`node bin/coffer.js` on a Node.js before 22.12 says so in one line and exits 1; a newer one runs', async () => {
    const answer = await new Promise<Run & { version: string }>((resolve) => {
      execFile(systemNode, ['-e', 'process.stdout.write(process.version)'], (_error, version) => {
        execFile(systemNode, [COFFER_BIN, '--version'], { env: { ...process.env, COFFER_OPERATOR: 'false' } }, (error, stdout, stderr) => {
          resolve({ version, code: error ? (typeof error.code === 'number' ? error.code : -1) : 0, stdout, stderr });
        });
      });
    });
    const [major = 0, minor = 0] = answer.version.slice(1).split('.').map(Number);
    if (major < 22 || (major === 22 && minor < 12)) {
      expect(answer.code).toBe(1);
      expect(answer.stderr.trim().split('\n')).toEqual([expect.stringContaining(`coffer needs Node.js 22.12 or newer, and this is ${answer.version}`)]);
    } else {
      expect(answer).toMatchObject({ code: 0, stdout: expect.stringContaining(VERSION) });
    }
  });
});

describe('usage errors exit 2 with the message and how to get help', () => {
  test('no command', async () => {
    const run = await coffer([]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('Usage: coffer <command> [flags]');
  });

  test('an unknown command', async () => {
    const run = await coffer(['sevre']);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("coffer: unknown command 'sevre'");
    expect((await coffer(['secrets'])).stderr).toContain("To read and write secrets, use Infisical's CLI (infisical secrets --domain http://<coffer>/api)");
    expect(run.stderr).toContain('Did you mean serve?');
    expect(run.stderr).toContain("Run 'coffer help' for the commands.");
  });

  test('an unknown flag names the command, suggests the nearest flag and points to the help', async () => {
    const run = await coffer(['serve', '--prot', '9000']);
    expect(run).toMatchObject({ code: 2, stdout: '' });
    expect(run.stderr).toContain("coffer serve: unknown option '--prot'");
    expect(run.stderr).toContain('Did you mean --port?');
    expect(run.stderr).toContain("Run 'coffer help serve' for its flags.");
    expect(run.stderr).not.toMatch(/ERR_PARSE_ARGS|TypeError|at .*\.js:\d+/);
  });

  test('a flag without its value', async () => {
    const run = await coffer(['migrate', '--database-url']);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("coffer migrate: option '--database-url <value>' argument missing");
  });

  test('an argument a command does not take', async () => {
    const run = await coffer(['migrate', 'now']);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("coffer migrate: too many arguments for 'migrate'");
  });

  test('bootstrap without its inputs names each one', async () => {
    const run = await coffer(['bootstrap', '--email', 'not-an-email'], { COFFER_DATA_DIR: join(scratch, 'unused') });
    expect(run.code).toBe(2);
    expect(run.stderr).toBe('coffer bootstrap: --email must be an email address; --password is required; --organization is required\n');
  });

  test('a malformed --timeout', async () => {
    const run = await coffer([
      'bootstrap',
      '--server',
      'http://127.0.0.1:1',
      '--timeout',
      'soon',
      '--email',
      'a@example.com',
      '--password',
      'long enough',
      '--organization',
      'Acme',
    ]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("--timeout must be a duration such as 90s, 10m or 1h, not 'soon'");
  });
});

describe('configuration errors exit 3 naming the setting', () => {
  test.each([
    [{ COFFER_PORT: 'http' }, 'COFFER_PORT (--port): must be a port number, 0 to 65535'],
    [{ COFFER_LOG_FORMAT: 'fancy' }, 'COFFER_LOG_FORMAT (--log-format)'],
    [{ COFFER_ENCRYPTION_KEY: 'c2hvcnQ=' }, 'COFFER_ENCRYPTION_KEY (--encryption-key): must be 32 bytes, base64-encoded (openssl rand -base64 32)'],
    [{ DATABASE_URL: 'postgresql://db/coffer' }, 'COFFER_ENCRYPTION_KEY (--encryption-key): is required when DATABASE_URL is set'],
  ])('%o', async (env, message) => {
    const run = await coffer(['serve'], env);
    expect(run.code).toBe(3);
    expect(run.stderr).toContain('coffer serve: invalid configuration:');
    expect(run.stderr).toContain(message);
  });

  test('coffer operator and coffer uninstall without a Kubernetes configuration say so instead of blaming Coffer', async () => {
    const home = join(scratch, 'no-kube-home');
    mkdirSync(home, { recursive: true });
    for (const command of [['operator', '--server', 'https://coffer.example.com'], ['uninstall']]) {
      const none = await coffer(command, { HOME: home, KUBECONFIG: '', KUBERNETES_SERVICE_HOST: '' });
      expect(none.code).toBe(3);
      expect(none.stderr).toContain(`coffer ${command[0]}: no Kubernetes configuration found: set KUBECONFIG, create ~/.kube/config, or run it in a cluster`);
      const missing = await coffer(command, { KUBECONFIG: join(scratch, 'no-such-kubeconfig') });
      expect(missing.code).toBe(3);
      expect(missing.stderr).toContain(`KUBECONFIG names ${join(scratch, 'no-such-kubeconfig')}, which does not exist`);
    }
  });

  test('a flag is checked like its variable', async () => {
    const run = await coffer(['serve', '--probe-port', '99999']);
    expect(run.code).toBe(3);
    expect(run.stderr).toContain('COFFER_PROBE_PORT (--probe-port): must be a port number');
  });

  test('an unreadable generated keys file names the file and what to do', async () => {
    const dataDir = join(scratch, 'broken-keys');
    mkdirSync(dataDir);
    writeFileSync(join(dataDir, 'keys.json'), '{"encryptionKey": "trunc');
    const setUp = ['bootstrap', '--email', 'a@example.com', '--password', 'long enough', '--organization', 'Acme'];
    const run = await coffer(setUp, { COFFER_DATA_DIR: dataDir, COFFER_ENCRYPTION_KEY: '', COFFER_AUTH_SECRET: '' });
    expect(run.code).toBe(3);
    expect(run.stderr).toContain(`coffer bootstrap: cannot read the generated keys in ${join(dataDir, 'keys.json')}`);
    expect(run.stderr).toContain('restore it from a backup, or set COFFER_ENCRYPTION_KEY and COFFER_AUTH_SECRET');
  });
});

describe('database errors exit 4 naming the database (password masked) and DATABASE_URL', () => {
  const server = () => new URL(inject('postgresAdminUrl'));
  const withDatabase = (url: string) => ({ DATABASE_URL: url, ...keys });

  test('nothing listens at the address', async () => {
    const port = await freePort();
    const run = await coffer(['migrate'], withDatabase(`postgresql://coffer:hunter2-password@127.0.0.1:${port}/coffer`));
    expect(run.code).toBe(4);
    expect(run.stderr).toContain(`coffer migrate: cannot connect to PostgreSQL at postgresql://coffer:****@127.0.0.1:${port}/coffer: connection refused`);
    expect(run.stderr).toContain('set DATABASE_URL (--database-url) to where it runs');
    expect(run.stderr + run.stdout).not.toContain('hunter2-password');
  });

  test('a host that does not resolve', async () => {
    const run = await coffer(['serve'], withDatabase('postgresql://coffer:hunter2-password@no-such-host.invalid:5432/coffer'));
    expect(run.code).toBe(4);
    expect(run.stderr).toContain(
      "coffer serve: cannot connect to PostgreSQL at postgresql://coffer:****@no-such-host.invalid:5432/coffer: the host 'no-such-host.invalid' cannot be resolved",
    );
    expect(run.stderr + run.stdout).not.toContain('hunter2-password');
  });

  test('a user the server does not accept', async () => {
    const url = server();
    url.username = 'no_such_coffer_user';
    url.password = 'hunter2-password';
    const run = await coffer(['migrate'], withDatabase(url.toString()));
    expect(run.code).toBe(4);
    expect(run.stderr).toContain(`does not let user 'no_such_coffer_user' connect`);
    expect(run.stderr).toContain('Set an existing user that may connect in DATABASE_URL (--database-url).');
    expect(run.stderr + run.stdout).not.toContain('hunter2-password');
  });

  test('a database that does not exist', async () => {
    const url = server();
    url.pathname = '/no_such_coffer_database';
    const run = await coffer(['bootstrap', '--email', 'a@example.com', '--password', 'long enough', '--organization', 'Acme'], withDatabase(url.toString()));
    expect(run.code).toBe(4);
    expect(run.stderr).toContain(`coffer bootstrap: PostgreSQL at ${url.hostname}:${url.port || 5432} has no database 'no_such_coffer_database'. Create it`);
  });

  test('an embedded data directory that cannot be created', async () => {
    const file = join(scratch, 'a-file');
    writeFileSync(file, '');
    const run = await coffer(['migrate'], { COFFER_DATA_DIR: join(file, 'data'), ...keys });
    expect(run.code).toBe(4);
    expect(run.stderr).toContain(`coffer migrate: cannot use the data directory '${join(file, 'data')}' for the embedded database`);
    expect(run.stderr).toContain('Set COFFER_DATA_DIR (--data-dir) to a directory this user may write');
  });
});

describe('coffer migrate', () => {
  test('needs only the database: the example of its help runs as written, with no root key or token secret', async () => {
    const help = await coffer(['help', 'migrate']);
    expect(help.stdout).toContain('DATABASE_URL=postgresql://');
    expect(help.stdout).toContain('no root key or token secret');
    const adminUrl = inject('postgresAdminUrl');
    const name = `${inject('postgresRunPrefix')}_migrate_${randomBytes(4).toString('hex')}`;
    await adminQuery(adminUrl, `CREATE DATABASE ${name}`);
    const run = await coffer(['migrate'], { DATABASE_URL: databaseUrl(adminUrl, name), COFFER_ENCRYPTION_KEY: '', COFFER_AUTH_SECRET: '' });
    expect(run.stderr).not.toContain('invalid configuration');
    expect(run.code).toBe(0);
    const { rows } = await adminQuery(databaseUrl(adminUrl, name), 'SELECT count(*)::int AS applied FROM schema_migrations');
    expect(rows[0].applied).toBeGreaterThan(0);
  });
});

describe('network errors exit 5 naming the port and its setting', () => {
  let holder: Server;
  let taken: number;
  // whatever connects to the port held (a client told of it by mistake) must not keep close() waiting
  const connections = new Set<Socket>();
  beforeAll(async () => {
    holder = createServer((socket) => {
      connections.add(socket);
      socket.on('close', () => connections.delete(socket));
    });
    await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
    taken = (holder.address() as { port: number }).port;
  });
  afterAll(
    () =>
      new Promise<void>((resolve) => {
        for (const socket of connections) socket.destroy();
        holder.close(() => resolve());
      }),
  );

  test('the API port is in use', async () => {
    const run = await coffer(['serve'], { COFFER_DATA_DIR: join(scratch, 'network'), COFFER_PORT: String(taken), COFFER_PROBE_PORT: String(await freePort()) });
    expect(run.code).toBe(5);
    expect(run.stderr).toContain(
      `coffer serve: cannot listen for the API on 127.0.0.1:${taken}: the port is in use by another process. Stop it, or set COFFER_PORT (--port) to a free port.`,
    );
  });

  test('the probe port is in use', async () => {
    const run = await coffer(['serve'], { COFFER_DATA_DIR: join(scratch, 'network'), COFFER_PORT: String(await freePort()), COFFER_PROBE_PORT: String(taken) });
    expect(run.code).toBe(5);
    expect(run.stderr).toContain(
      `cannot listen for the probes on 127.0.0.1:${taken}: the port is in use by another process. Stop it, or set COFFER_PROBE_PORT (--probe-port) to a free port.`,
    );
  });

  test('a listen address that is not on this machine', async () => {
    const run = await coffer(['serve'], { COFFER_DATA_DIR: join(scratch, 'network'), COFFER_HOST: '192.0.2.1', COFFER_PORT: String(await freePort()) });
    expect(run.code).toBe(5);
    expect(run.stderr).toContain("'192.0.2.1' is not an address of this machine. Set COFFER_HOST (--host)");
  });
});

describe('the documented exit codes', () => {
  test('README "Exit codes" lists every code the CLI uses, with its meaning', () => {
    const readme = readFileSync(README_PATH, 'utf8');
    const rows = [...readme.matchAll(/^\| (\d+) \| ([^|]+) \|/gm)].map((match) => [Number(match[1]), match[2]!.trim()] as const);
    expect(rows.map(([code]) => code)).toEqual(Object.values(EXIT));
    const names: Record<number, RegExp> = { 0: /success/, 1: /failed/, 2: /usage/, 3: /configuration/, 4: /database/, 5: /port/, 70: /lock/ };
    for (const [code, meaning] of rows) expect(meaning).toMatch(names[code]!);
  });
});

describe('logs', () => {
  test('Ctrl-C of coffer serve is a clean stop: exit 0, the shutdown at INFO, nothing above INFO', async () => {
    const server = await startCoffer({ COFFER_DATA_DIR: join(scratch, 'interrupt'), DATABASE_URL: '', COFFER_OPERATOR: 'false' });
    expect((await fetch(`${server.api}/api/status`)).status).toBe(200);
    const { code, lines } = await interrupt(server.process, server.output);
    expect(code).toBe(0);
    expect(lines.find((line) => line.msg === 'shutting down')?.level).toBe(30);
    expect(lines.filter((line) => line.level >= 40).map((line) => line.msg)).toEqual([]);
  });

  test('COFFER_LOG_FORMAT=pretty: readable lines, migration progress, the bootstrap hint, one line per request', async () => {
    const server = await startCoffer({ COFFER_DATA_DIR: join(scratch, 'pretty'), DATABASE_URL: '', COFFER_OPERATOR: 'false', COFFER_LOG_FORMAT: 'pretty' });
    try {
      expect((await fetch(`${server.api}/api/status`)).status).toBe(200);
      const lines = () => server.output.join('').split('\n');
      for (let waited = 0; !lines().some((line) => line.includes('GET /api/status')) && waited < 5_000; waited += 50)
        await new Promise((resolve) => setTimeout(resolve, 50));
      const output = lines();
      const stamp = String.raw`^\[\d\d:\d\d:\d\d\.\d{3}\] `;
      expect(output).toContainEqual(expect.stringMatching(new RegExp(`${stamp}INFO: applying \\d+ database migrations$`)));
      expect(output).toContainEqual(expect.stringMatching(new RegExp(`${stamp}INFO: migration 0001_foundation applied$`)));
      expect(output).toContainEqual(expect.stringMatching(new RegExp(`${stamp}INFO: this instance is not set up yet`)));
      const requests = output.filter((line) => line.includes('/api/status'));
      expect(requests).toHaveLength(1);
      expect(requests[0]).toMatch(new RegExp(`${stamp}INFO: GET /api/status 200 [\\d.]+ ms \\{"reqId":"req-[0-9a-f-]+"\\}$`));
      expect(output.join('\n')).not.toMatch(/"level":\d/);
    } finally {
      await stopCoffer(server);
    }
  });
});
