#!/usr/bin/env node
import { main } from '../dist/main.js';

// main() reports its own errors (with the exit codes in README "Exit codes"); this only catches its bugs.
main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error) => {
    console.error(`coffer: ${error instanceof Error ? error.stack : String(error)}`);
    process.exitCode = 1;
  },
);
