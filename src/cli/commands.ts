import { rotateKeyCommand } from './rotate-key-command.ts';
import { VERSION } from '../version.ts';
import { bootstrapCommand } from './bootstrap-command.ts';
import type { CommandSpec } from './command.ts';
import { migrateCommand } from './migrate-command.ts';
import { operatorCommand } from './operator-command.ts';
import { serveCommand } from './serve-command.ts';
import { uninstallCommand } from './uninstall-command.ts';
import { waitCommand } from './wait-command.ts';

const versionCommand: CommandSpec = {
  name: 'version',
  summary: 'print the version',
  description: 'Prints `coffer <version>` (the same as `coffer --version`).',
  async run() {
    process.stdout.write(`coffer ${VERSION}\n`);
  },
};

const rotateKey: CommandSpec = {
  name: 'rotate-key',
  summary: 're-wrap every project data key under a new root key',
  description:
    'Re-wraps every project data key and the root-key check value under a new root key, in one transaction. The current key is read as usual ' +
    '(COFFER_ENCRYPTION_KEY, or keys.json, which then receives the new key). Stop every coffer server first (on PostgreSQL the command refuses ' +
    'while servers are connected); start them with the new key afterwards.',
  flags: [{ flags: '--new-key <base64>', description: 'the new root key, 32 bytes base64 (openssl rand -base64 32) [COFFER_NEW_ENCRYPTION_KEY]' }],
  settings: ['storage', 'keys', 'logging'],
  examples: ['COFFER_NEW_ENCRYPTION_KEY="$(openssl rand -base64 32)" coffer rotate-key'],
  run: rotateKeyCommand,
};

/** Every `coffer` command, in the order `coffer help` lists them. A new command is one more entry. */
export const commands: CommandSpec[] = [serveCommand, operatorCommand, migrateCommand, bootstrapCommand, waitCommand, rotateKey, uninstallCommand, versionCommand];
