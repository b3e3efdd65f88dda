// Stand-alone config for the control-plane harness's own test (no database needed):
//   npx vitest run --config test/k8s/vitest.k8s.config.ts
// The main vitest.config.ts runs all of test/cluster/ with test/k8s/global-setup.ts.
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  root: fileURLToPath(new URL('../..', import.meta.url)),
  test: {
    include: ['test/cluster/control-plane.test.ts'],
    globalSetup: ['test/k8s/global-setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // stopping kube-apiserver/kcm/etcd gracefully takes a few seconds
    teardownTimeout: 30_000,
  },
});
