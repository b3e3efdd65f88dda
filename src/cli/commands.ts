import { VERSION } from '../version.ts';
import { bootstrapCommand } from './bootstrap-command.ts';
import type { CommandSpec } from './command.ts';
import { migrateCommand } from './migrate-command.ts';
import { serveCommand } from './serve-command.ts';

const versionCommand: CommandSpec = {
  name: 'version',
  summary: 'print the version',
  description: 'Prints `coffer <version>` (the same as `coffer --version`).',
  async run() {
    process.stdout.write(`coffer ${VERSION}\n`);
  },
};

/** Every `coffer` command, in the order `coffer help` lists them. A new command is one more entry. */
export const commands: CommandSpec[] = [serveCommand, migrateCommand, bootstrapCommand, versionCommand];
