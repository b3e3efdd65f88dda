import { Command, CommanderError, Option } from 'commander';
import { ConfigError, type SettingGroup, settingsIn } from '../config.ts';
import { KeysFileError } from '../crypto/secrets-file.ts';
import { DataDirInUseError } from '../db/data-dir-lock.ts';
import { RootKeyMismatchError } from '../installation/root-key.ts';
import { VERSION } from '../version.ts';
import type { CommandSpec } from './command.ts';
import { CliError, EXIT, type ExitCode } from './exit-codes.ts';

export interface CliOutput {
  stdout(text: string): void;
  stderr(text: string): void;
}

const GROUP_HEADINGS: Record<SettingGroup, string> = {
  server: 'Server settings',
  storage: 'Storage settings',
  keys: 'Key settings',
  logging: 'Log settings',
  login: 'Login throttling settings (universal-auth login, user login, invite acceptance)',
  operator: 'Operator settings',
  remote: 'Coffer server settings (coffer operator)',
};

const SETTINGS_NOTE = 'Every setting may also be given by its environment variable (shown in brackets); a flag wins over the variable.';

/** Runs `coffer` with these arguments; resolves to the exit code (a long-running command resolves once it is up). */
export async function runCli(commands: CommandSpec[], argv: string[], output: CliOutput): Promise<ExitCode> {
  let current = 'coffer';
  const program = buildProgram(commands, output, (name) => (current = `coffer ${name}`));
  try {
    await program.parseAsync(argv, { from: 'user' });
    return EXIT.ok;
  } catch (error) {
    if (error instanceof CommanderError) return error.exitCode === 0 ? EXIT.ok : EXIT.usage;
    const { message, exitCode } = describeFailure(error);
    output.stderr(`${current}: ${message}\n`);
    return exitCode;
  }
}

function describeFailure(error: unknown): { message: string; exitCode: ExitCode } {
  if (error instanceof CliError) return { message: error.message, exitCode: error.exitCode };
  if (error instanceof ConfigError || error instanceof KeysFileError || error instanceof RootKeyMismatchError)
    return { message: error.message, exitCode: EXIT.configuration };
  if (error instanceof DataDirInUseError) return { message: error.message, exitCode: EXIT.database };
  return { message: error instanceof Error ? error.message : String(error), exitCode: EXIT.failed };
}

/** `coffer` has no secrets commands: the clients people already use work against it. */
const CLIENTS_NOTE =
  "To read and write secrets, use Infisical's CLI (infisical secrets --domain http://<coffer>/api), SDKs or operator, or ESO, against this server " +
  '(README "Infisical clients"), or its API (/api/docs).';

function buildProgram(commands: CommandSpec[], output: CliOutput, onCommand: (name: string) => void): Command {
  const program = new Command('coffer')
    .description('Coffer: a Kubernetes-native secrets manager (Infisical-compatible API and operator).')
    .usage('<command> [flags]')
    .version(`coffer ${VERSION}`, '-v, --version', 'print the version')
    .helpOption('-h, --help', 'show help')
    .helpCommand('help [command]', 'show help for a command')
    .exitOverride()
    .configureOutput(outputFor('coffer', output))
    .configureHelp({ subcommandTerm: (command) => command.name() })
    .showSuggestionAfterError(true)
    .showHelpAfterError(`Run 'coffer help' for the commands. ${CLIENTS_NOTE}`)
    .addHelpText(
      'after',
      `\nRun 'coffer help <command>' (or 'coffer <command> --help') for a command's flags and settings.\n${CLIENTS_NOTE}\nExit codes: 0 ok, 1 failed, 2 usage, 3 configuration, 4 database, 5 network, 70 data directory lost (README "Exit codes").`,
    );
  for (const spec of commands) program.addCommand(buildCommand(program, spec, output, onCommand));
  return program;
}

/** Commander's messages (`error: unknown option '--prot'`) as `coffer serve: unknown option '--prot'`. */
function outputFor(prefix: string, output: CliOutput) {
  return {
    writeOut: (text: string) => output.stdout(text),
    writeErr: (text: string) => output.stderr(text),
    outputError: (text: string, write: (text: string) => void) => write(text.replace(/^error: /, `${prefix}: `)),
  };
}

function buildCommand(program: Command, spec: CommandSpec, output: CliOutput, onCommand: (name: string) => void): Command {
  const command = new Command(spec.name)
    .copyInheritedSettings(program)
    .configureOutput(outputFor(`coffer ${spec.name}`, output))
    .summary(spec.summary)
    .description(spec.description)
    .usage(spec.flags?.length || spec.settings?.length ? '[flags]' : '')
    .helpOption('-h, --help', 'show help for this command')
    .showHelpAfterError(`Run 'coffer help ${spec.name}' for its flags.`)
    .action(async (options: Record<string, unknown>) => {
      onCommand(spec.name);
      await spec.run(byFlagName(options));
    });
  for (const flag of spec.flags ?? []) command.option(flag.flags, flag.description);
  for (const group of spec.settings ?? []) {
    for (const setting of settingsIn([group])) {
      command.addOption(new Option(`--${setting.flag} <value>`, `${setting.help} [${setting.env}]`).helpGroup(`${GROUP_HEADINGS[group]}:`));
    }
  }
  if (spec.settings?.length) command.addHelpText('after', `\n${SETTINGS_NOTE}`);
  if (spec.examples?.length) command.addHelpText('after', `\nExamples:\n${spec.examples.map((line) => `  ${line}`).join('\n')}`);
  return command;
}

/** Commander's camelCase option names back to the flags' own (`storeSecret` → `store-secret`). */
function byFlagName(options: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(options).map(([key, value]) => [key.replace(/[A-Z]/g, (letter) => `-${letter.toLowerCase()}`), value]));
}
