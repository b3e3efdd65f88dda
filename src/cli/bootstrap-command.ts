import { hostname } from 'node:os';
import { z } from 'zod';
import {
  AlreadyBootstrappedError,
  adminSecretData,
  assertCanStoreSecret,
  type BootstrapResult,
  bootstrapOverHttp,
  parseTimeout,
  resolveSecretTarget,
  storeSecret,
  withoutToken,
} from '../bootstrap/bootstrap-remote.ts';
import { loadConfig } from '../config.ts';
import { DataDirInUseError } from '../db/data-dir-lock.ts';
import { AppError } from '../errors.ts';
import { createLogger, startServices } from '../runtime.ts';
import type { Services } from '../app/container.ts';
import type { CommandSpec } from './command.ts';
import { withDatabaseExplained } from './database-errors.ts';
import { CliError, EXIT } from './exit-codes.ts';

export const bootstrapCommand: CommandSpec = {
  name: 'bootstrap',
  summary: 'set up an empty instance: admin user, organization and an admin token',
  description:
    'Creates the admin user, the organization and the admin machine identity `coffer-admin` with a non-expiring (revocable) ' +
    'access token, once per instance, and prints them (the token last, or everything as JSON with --json). ' +
    "With --server it goes through a running server's API (POST /api/v1/admin/bootstrap); without, straight into the " +
    "configured database (on an embedded data directory that a local `coffer serve` holds, through that server's API).",
  flags: [
    { flags: '--email <email>', description: "the admin user's email [COFFER_BOOTSTRAP_EMAIL]" },
    { flags: '--password <password>', description: "the admin user's password, at least 8 characters [COFFER_BOOTSTRAP_PASSWORD]" },
    { flags: '--organization <name>', description: "the organization's name [COFFER_BOOTSTRAP_ORGANIZATION]" },
    { flags: '--json', description: 'print the whole result as JSON (token included) instead of text' },
    { flags: '--server <url>', description: "bootstrap through this server's API, retrying until it answers (up to --timeout)" },
    { flags: '--timeout <duration>', description: 'how long --server waits for the server (default 5m)' },
    {
      flags: '--store-secret <name>',
      description: 'write the result (token, email, organization and identity ids) into this Kubernetes Secret in POD_NAMESPACE instead of printing the token',
    },
    { flags: '--if-needed', description: 'an instance that is already set up is not an error (exit 0)' },
  ],
  settings: ['storage', 'keys', 'logging'],
  examples: [
    "coffer bootstrap --server http://127.0.0.1:8080 --email admin@example.com --password 'a long password' --organization Acme --json",
    "coffer bootstrap --server http://coffer:8080 --store-secret coffer-admin --if-needed   # the Helm chart's post-install job",
  ],
  run: bootstrap,
};

const bootstrapInput = z.object({
  email: z.email('--email must be an email address'),
  password: z.string('--password is required').min(8, '--password must be at least 8 characters'),
  organization: z.string('--organization is required').trim().min(1, '--organization is required'),
});

async function bootstrap(flags: Record<string, unknown>): Promise<void> {
  const parsed = bootstrapInput.safeParse({
    email: flags.email ?? process.env.COFFER_BOOTSTRAP_EMAIL,
    password: flags.password ?? process.env.COFFER_BOOTSTRAP_PASSWORD,
    organization: flags.organization ?? process.env.COFFER_BOOTSTRAP_ORGANIZATION,
  });
  if (!parsed.success) throw new CliError(parsed.error.issues.map((issue) => issue.message).join('; '), EXIT.usage);
  const server = typeof flags.server === 'string' ? flags.server : undefined;
  const timeoutMs = typeof flags.timeout === 'string' ? parseTimeoutFlag(flags.timeout) : undefined;
  // Before the one-time bootstrap: a token that cannot be stored afterwards would be lost.
  const target = typeof flags['store-secret'] === 'string' ? resolveSecretTarget(flags['store-secret']) : undefined;
  if (target) await assertCanStoreSecret(target);

  let result: BootstrapResult;
  try {
    result = server
      ? await bootstrapOverHttp({ server, input: parsed.data, timeoutMs, log: (message) => process.stderr.write(`coffer bootstrap: ${message}\n`) })
      : await bootstrapDatabase(flags, parsed.data);
  } catch (error) {
    const already = error instanceof AlreadyBootstrappedError || (error instanceof AppError && error.code === 'BootstrapError');
    if (already && flags['if-needed']) {
      process.stdout.write(`The instance is already set up; nothing to do.${target ? ` Secret ${target.namespace}/${target.name} is left as it is.` : ''}\n`);
      return;
    }
    if (already) throw new CliError(`${error instanceof Error ? error.message : String(error)} (--if-needed makes this not an error)`, EXIT.failed);
    throw error;
  }

  if (target) {
    await retry(() => storeSecret(target, adminSecretData(result, server)), 5, 2_000);
    if (flags.json) {
      process.stdout.write(`${JSON.stringify({ ...withoutToken(result), secret: { namespace: target.namespace, name: target.name } }, null, 2)}\n`);
    } else {
      process.stdout.write(
        `Bootstrapped organization '${result.organization.name}' (${result.organization.id}) with admin ${result.user.email}.\n` +
          `Admin identity '${result.identity.name}' (${result.identity.id}): its access token is in Secret ${target.namespace}/${target.name} (key token).\n`,
      );
    }
    return;
  }
  if (flags.json) {
    process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
  } else {
    process.stdout.write(
      `Bootstrapped organization '${result.organization.name}' (${result.organization.id}) with admin ${result.user.email}.\n` +
        `Admin identity '${result.identity.name}' (${result.identity.id}) access token:\n${result.identity.credentials.token}\n`,
    );
  }
}

function parseTimeoutFlag(value: string): number {
  try {
    return parseTimeout(value);
  } catch (error) {
    throw new CliError(error instanceof Error ? error.message : String(error), EXIT.usage);
  }
}

/**
 * The bootstrap straight into the database; on an embedded directory that a
 * local `coffer serve` holds, through that server's API instead.
 */
async function bootstrapDatabase(flags: Record<string, unknown>, input: z.output<typeof bootstrapInput>): Promise<BootstrapResult> {
  const config = loadConfig(flags);
  const logger = createLogger(config, 2);
  let services: Services;
  try {
    services = await withDatabaseExplained(config, () => startServices(config, logger, 'bootstrap'));
  } catch (error) {
    if (!(error instanceof DataDirInUseError)) throw error;
    const server = error.holder?.host === hostname() ? error.holder.api : undefined;
    if (!server) throw new CliError(`${error.message}. Run coffer bootstrap --server <its API address> to bootstrap through it.`, EXIT.database);
    process.stderr.write(`coffer bootstrap: ${error.message}; bootstrapping through its API at ${server}\n`);
    return bootstrapOverHttp({ server, input, timeoutMs: 30_000 });
  }
  try {
    return await services.bootstrap.bootstrap(input);
  } finally {
    await services.database.close();
  }
}

async function retry<T>(action: () => Promise<T>, attempts: number, delayMs: number): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await action();
    } catch (error) {
      if (attempt >= attempts) throw error;
      process.stderr.write(`coffer bootstrap: ${error instanceof Error ? error.message : String(error)}; retrying\n`);
      await new Promise((resolve) => setTimeout(resolve, delayMs));
    }
  }
}
