import type { SettingGroup } from '../config.ts';

/** A flag of one command (settings are added from their groups). */
export interface FlagSpec {
  /** Commander syntax: `--email <email>`, `--json`, `-t, --timeout <duration>`. */
  flags: string;
  description: string;
}

/**
 * One `coffer` command, declared in one place: what `coffer help` lists, what
 * `coffer help <name>` shows, the flags it accepts, and what it runs.
 */
export interface CommandSpec {
  name: string;
  /** One line for `coffer help`. */
  summary: string;
  /** The paragraph `coffer help <name>` shows under the usage line. */
  description: string;
  flags?: FlagSpec[];
  /** Settings (flag or environment variable) the command reads, by group. */
  settings?: SettingGroup[];
  /** Lines shown under "Examples:". */
  examples?: string[];
  /**
   * Runs the command with its flags, keyed by their long names (`store-secret`,
   * `database-url`). Throw a CliError to exit with its code and message.
   */
  run(flags: Record<string, unknown>): Promise<void>;
}
