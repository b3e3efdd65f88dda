import { commands } from './cli/commands.ts';
import type { ExitCode } from './cli/exit-codes.ts';
import { runCli } from './cli/program.ts';

export { VERSION } from './version.ts';

/** `coffer <command> [flags]`; resolves to the exit code (`serve` resolves once it is up and keeps running). */
export function main(argv: string[]): Promise<ExitCode> {
  return runCli(commands, argv, {
    stdout: (text) => process.stdout.write(text),
    stderr: (text) => process.stderr.write(text),
  });
}
