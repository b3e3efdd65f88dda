import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

/**
 * One suite, several projects: the API, service and storage tests run once on
 * embedded PGlite and once on PostgreSQL; cluster tests get a real kube-apiserver.
 */
const apiTests = ['test/api/**/*.test.ts', 'test/service/**/*.test.ts', 'test/stress/fuzz.test.ts'];

export default defineConfig({
  test: {
    // vitest's default is one worker fewer than the cores: on 2 cores, one file at a time while the
    // other core waited. Most files wait on PostgreSQL, child processes or the network, so two run at once.
    // (The cluster project still runs its files one at a time, after the others: fileParallelism below.)
    maxWorkers: Math.max(2, availableParallelism() - 1),
    testTimeout: 30_000,
    hookTimeout: 120_000,
    // stopping the control plane gracefully takes a few seconds
    teardownTimeout: 30_000,
    // the timing report of every run: .vitest-results/timings.md (test/support/timing-reporter.ts)
    reporters: ['default', './test/support/timing-reporter.ts'],
    projects: [
      { extends: true, test: { name: 'unit', include: ['test/unit/**/*.test.ts'] } },
      {
        extends: true,
        test: {
          name: 'pglite',
          include: apiTests,
          env: { COFFER_TEST_BACKEND: 'pglite' },
          globalSetup: ['test/support/pglite-global-setup.ts'],
          // files share a worker's module graph (each starts its own app and database): importing it again per file
          // cost about a third of their time
          isolate: false,
        },
      },
      {
        extends: true,
        test: {
          name: 'postgres',
          include: apiTests,
          env: { COFFER_TEST_BACKEND: 'postgres' },
          isolate: false,
          globalSetup: ['test/support/postgres-global-setup.ts'],
        },
      },
      {
        extends: true,
        test: { name: 'e2e', include: ['test/e2e/**/*.test.ts'], testTimeout: 60_000, globalSetup: ['test/support/postgres-global-setup.ts'] },
      },
      {
        extends: true,
        test: {
          // the web console in Debian's chromium (scripts/chromium.sh), driven by playwright-core; needs `npm run build`
          name: 'console',
          include: ['test/console/**/*.test.ts'],
          env: { COFFER_TEST_BACKEND: 'pglite' },
          globalSetup: ['test/console/chromium-setup.ts', 'test/support/pglite-global-setup.ts'],
          testTimeout: 60_000,
        },
      },
      // A PostgreSQL server of the test's own, stopped and started under load (test/support/private-postgres.ts).
      { extends: true, test: { name: 'faults', include: ['test/stress/database-outage.test.ts'], testTimeout: 300_000 } },
      {
        extends: true,
        test: {
          // the official Infisical SDKs (Node, and Go built from the module proxy) against `coffer serve`
          name: 'clients',
          include: ['test/clients/**/*.test.ts'],
          globalSetup: ['test/clients/go-build-setup.ts', 'test/support/postgres-global-setup.ts'],
          testTimeout: 180_000,
          hookTimeout: 600_000,
        },
      },
      {
        extends: true,
        test: {
          name: 'cluster',
          include: ['test/cluster/**/*.test.ts'],
          globalSetup: ['test/k8s/global-setup.ts', 'test/support/postgres-global-setup.ts'],
          // One file at a time: the operators these files start watch the whole cluster (they would
          // reconcile each other's resources), and packaging.test.ts binds cluster-wide RBAC to the
          // test user `operator` that control-plane.test.ts expects to have none.
          fileParallelism: false,
          testTimeout: 120_000,
          hookTimeout: 300_000,
        },
      },
    ],
  },
});
