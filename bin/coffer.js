#!/usr/bin/env node
// Checked before anything is imported: on an older Node.js the imports themselves fail with a stack trace.
const [major, minor] = process.versions.node.split('.').map(Number);
if (major < 22 || (major === 22 && minor < 12)) {
  console.error(
    `coffer needs Node.js 22.12 or newer, and this is ${process.version}: run it through npm (npx coffer …, npm start), which uses the Node.js 24 that npm ci installed, or install Node.js 24.`,
  );
  process.exit(1);
}

const { main } = await import('../dist/main.js').catch((error) => {
  if (error?.code !== 'ERR_MODULE_NOT_FOUND' || !String(error.message).includes('dist/main.js')) throw error;
  console.error('coffer is not built: run `npm run build` (or `npm start`, which builds) in the checkout first.');
  process.exit(1);
});

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
