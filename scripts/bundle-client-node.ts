/**
 * Replaces dist/kubernetes/client-node.js (tsc's re-export of @kubernetes/client-node) with a bundle of what it
 * exports and what those reach, after `tsc -p tsconfig.build.json` (npm run build, npm test, the Dockerfile).
 *
 * Why: the package's index imports its whole generated client (every API group of Kubernetes, 25 MB of
 * JavaScript), and V8 keeps each module's source: importing it costs a process 78 MiB of RSS, the operator at
 * 10,000 Integrations a quarter of its memory. The bundle keeps the API groups Coffer calls and the models, without
 * whitespace or comments (2.1 MB; 5.5 MB as written). Its other dependencies (undici, js-yaml, …) stay imports of node_modules.
 *
 *   node scripts/bundle-client-node.ts [dist directory]
 */
import { existsSync, renameSync, rmSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { rolldown } from 'rolldown';

const PACKAGE = '@kubernetes/client-node';

const dist = resolve(process.argv[2] ?? 'dist');
const module = join(dist, 'kubernetes', 'client-node.js');
if (!existsSync(module)) {
  console.error(`bundle-client-node: ${module} is missing: run tsc -p tsconfig.build.json first`);
  process.exit(1);
}
const partial = `${module}.partial`;
const bundle = await rolldown({
  input: module,
  platform: 'node',
  // only the Kubernetes client goes into the bundle; every other package is imported from node_modules as before
  external: (id) => !id.startsWith('.') && !id.startsWith('/') && id !== PACKAGE && !id.startsWith(`${PACKAGE}/`),
  logLevel: 'warn',
});
// without whitespace and comments (licences kept), names as they are: V8 keeps this source in the heap (5.5 MB → 2.1 MB)
await bundle.write({
  file: partial,
  format: 'esm',
  sourcemap: false,
  minify: { compress: false, mangle: false, codegen: { removeWhitespace: true } },
  comments: { legal: true, annotation: false, jsdoc: false },
});
await bundle.close();
renameSync(partial, module);
// tsc's map described the re-export, not the bundle
rmSync(`${module}.map`, { force: true });
console.log(`bundle-client-node: ${module} (${(statSync(module).size / 1e6).toFixed(1)} MB)`);
