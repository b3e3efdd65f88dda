import { CliError, EXIT } from './exit-codes.ts';

/**
 * The driver's and the OS's bare errors (`connect ECONNREFUSED`, `28P01`,
 * `EADDRINUSE`) turned into messages that say what failed, where, and which
 * setting to change. Anything not recognised is passed on unchanged.
 */

const DATABASE_SETTING = 'DATABASE_URL (--database-url)';

/** A PostgreSQL URL with its password (and any password query parameter) masked. */
export function maskDatabaseUrl(value: string): string {
  try {
    const url = new URL(value);
    if (url.password) url.password = '****';
    for (const name of [...url.searchParams.keys()]) if (/pass|secret|key/i.test(name)) url.searchParams.set(name, '****');
    return url.toString();
  } catch {
    return '(an unparseable URL)';
  }
}

/** The error codes of an error, its causes and, for AggregateError, its parts. */
function codesOf(error: unknown, seen = new Set<unknown>()): string[] {
  if (!error || typeof error !== 'object' || seen.has(error)) return [];
  seen.add(error);
  const own = 'code' in error && typeof error.code === 'string' ? [error.code] : [];
  const parts = error instanceof AggregateError ? error.errors : [];
  return [...own, ...parts.flatMap((part) => codesOf(part, seen)), ...codesOf((error as { cause?: unknown }).cause, seen)];
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** Explains a failure to open or migrate the PostgreSQL database at `databaseUrl`. */
export function explainPostgresError(error: unknown, databaseUrl: string): unknown {
  const codes = codesOf(error);
  const where = maskDatabaseUrl(databaseUrl);
  const { hostname, port, username, pathname } = safeUrl(databaseUrl);
  const user = decodeURIComponent(username) || 'the default user';
  const database = decodeURIComponent(pathname.slice(1)) || user;
  const reason = (text: string, exitCode: CliError['exitCode'] = EXIT.database) => new CliError(text, exitCode, { cause: error });
  if (codes.includes('ECONNREFUSED')) {
    return reason(
      `cannot connect to PostgreSQL at ${where}: connection refused (nothing listens on ${hostname}:${port || 5432}). ` +
        `Start PostgreSQL there, or set ${DATABASE_SETTING} to where it runs; leave it unset to use the embedded database.`,
    );
  }
  if (codes.includes('ENOTFOUND') || codes.includes('EAI_AGAIN')) {
    return reason(`cannot connect to PostgreSQL at ${where}: the host '${hostname}' cannot be resolved. Set ${DATABASE_SETTING} to a host this machine can reach.`);
  }
  if (codes.some((code) => ['ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ECONNRESET'].includes(code)) || /timeout/i.test(messageOf(error))) {
    return reason(`cannot connect to PostgreSQL at ${where}: ${messageOf(error)}. Check that ${hostname} is reachable from here, or set ${DATABASE_SETTING}.`);
  }
  if (codes.includes('28P01')) {
    return reason(`PostgreSQL at ${where} refused the password of user '${user}'. Set the right user and password in ${DATABASE_SETTING}.`);
  }
  if (codes.includes('28000')) {
    return reason(`PostgreSQL at ${where} does not let user '${user}' connect (${messageOf(error)}). Set an existing user that may connect in ${DATABASE_SETTING}.`);
  }
  if (codes.includes('3D000')) {
    return reason(
      `PostgreSQL at ${hostname}:${port || 5432} has no database '${database}'. Create it (createdb -h ${hostname} -U ${user} ${database}) or name an existing one in ${DATABASE_SETTING}.`,
    );
  }
  if (codes.includes('42501')) {
    return reason(
      `user '${user}' may not create Coffer's tables in database '${database}' at ${hostname} (${messageOf(error)}). ` +
        `Let it (GRANT CREATE ON SCHEMA public TO "${user}", or make it the database's owner) or use another user in ${DATABASE_SETTING}.`,
    );
  }
  return error;
}

/** Explains a failure to open the embedded database in `dataDir`. */
export function explainEmbeddedError(error: unknown, dataDir: string): unknown {
  const codes = codesOf(error);
  if (codes.some((code) => ['EACCES', 'EPERM', 'EROFS', 'ENOTDIR', 'EEXIST', 'ENOSPC'].includes(code))) {
    return new CliError(
      `cannot use the data directory '${dataDir}' for the embedded database (${messageOf(error)}). ` +
        'Set COFFER_DATA_DIR (--data-dir) to a directory this user may write, or set DATABASE_URL to use PostgreSQL.',
      EXIT.database,
      { cause: error },
    );
  }
  return error;
}

/** Explains a failure to listen on `host:port`, the port of `setting`. */
export function explainListenError(error: unknown, what: string, host: string, port: number, setting: string): unknown {
  const codes = codesOf(error);
  const at = `${host}:${port}`;
  if (codes.includes('EADDRINUSE')) {
    return new CliError(`cannot listen for the ${what} on ${at}: the port is in use by another process. Stop it, or set ${setting} to a free port.`, EXIT.network, {
      cause: error,
    });
  }
  if (codes.includes('EACCES') || codes.includes('EPERM')) {
    return new CliError(`cannot listen for the ${what} on ${at}: not permitted (ports below 1024 need privileges). Set ${setting} to a port above 1023.`, EXIT.network, {
      cause: error,
    });
  }
  if (codes.includes('EADDRNOTAVAIL') || codes.includes('ENOTFOUND') || codes.includes('EAI_AGAIN')) {
    return new CliError(
      `cannot listen for the ${what} on ${at}: '${host}' is not an address of this machine. Set COFFER_HOST (--host) to one (127.0.0.1, or 0.0.0.0 for all).`,
      EXIT.network,
      { cause: error },
    );
  }
  return error;
}

function safeUrl(value: string): URL {
  try {
    return new URL(value);
  } catch {
    return new URL('postgresql://unknown');
  }
}
