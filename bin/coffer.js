#!/usr/bin/env node
import { main } from '../dist/main.js';

main(process.argv.slice(2)).catch((error) => {
  console.error(`coffer: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
});
