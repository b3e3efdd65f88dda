/** What `coffer` exits with; README "Exit codes" lists the same table. */
export const EXIT = {
  ok: 0,
  /** The command ran and failed: the message says why (e.g. the instance is already bootstrapped). */
  failed: 1,
  /** The command line is wrong: an unknown command or flag, a missing or malformed flag value. */
  usage: 2,
  /** A setting (flag or environment variable) is invalid or missing, or the data directory's keys file is unusable. */
  configuration: 3,
  /** The database cannot be reached or used: connection refused, unknown host, wrong credentials, unknown database, no rights. */
  database: 4,
  /** A port cannot be listened on (in use, not permitted) or the listen address is not on this machine. */
  network: 5,
  /** `coffer wait`: the timeout ran out before the revision reached every Integration. */
  timedOut: 6,
  /**
   * A running server lost the embedded data directory's lock to another process, or (PostgreSQL) could not take
   * its serving lock again after that connection broke (a key rotation held it, or the root key had changed),
   * and stopped (EX_SOFTWARE).
   */
  dataDirLost: 70,
} as const;

export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

/** An error the command line reports as its message alone, with its exit code. */
export class CliError extends Error {
  readonly exitCode: ExitCode;

  constructor(message: string, exitCode: ExitCode, options?: { cause?: unknown }) {
    super(message, options);
    this.exitCode = exitCode;
  }
}
