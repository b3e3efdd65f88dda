/**
 * vitest globalSetup: one real control plane (etcd + kube-apiserver + kube-controller-manager) per
 * test run. Tests get the kubeconfig path with `inject('kubeconfig')` (contexts `admin`, current,
 * and `operator`) and build clients with test/k8s/helpers.ts.
 *
 * Never skips: if the binaries are missing and cannot be built, setup throws and the run fails.
 * Env: COFFER_KEEP_CLUSTER_LOGS=1 keeps the temp dir (logs, kubeconfig); it is also kept when any
 * test failed. COFFER_TESTBIN_DIR overrides the binary cache dir (see scripts/k8s-testbin.sh).
 */
import type { TestProject } from 'vitest/node';
import { ensureTestBinaries, startControlPlane, type KubeTokens } from './controlplane.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    /** path of the kubeconfig of the test control plane */
    kubeconfig: string;
    /** bearer tokens of its users */
    kubeTokens: KubeTokens;
    /** https://127.0.0.1:<port> */
    kubeServer: string;
  }
}

const log = (msg: string) => process.stderr.write(`[control plane] ${msg}\n`);

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const t0 = Date.now();
  const binDir = await ensureTestBinaries({ log });
  const tBins = Date.now() - t0;
  const cp = await startControlPlane({ binDir, log });
  log(
    `ready ${Date.now() - t0} ms after setup start (binaries check ${tBins} ms, then ms to: ` +
      `${Object.entries(cp.timings)
        .map(([k, v]) => `${k} ${v}`)
        .join(', ')}); CRDs: ${cp.crds.join(', ') || 'none'}; dir ${cp.dir}`,
  );
  project.provide('kubeconfig', cp.kubeconfigPath);
  project.provide('kubeTokens', cp.tokens);
  project.provide('kubeServer', cp.server);

  return async () => {
    let failed = true; // if the result cannot be read, keep the logs
    try {
      const state = project.vitest.state;
      failed = state.getCountOfFailedTests() > 0 || state.getFailedFilepaths().length > 0 || state.getUnhandledErrors().length > 0;
    } catch {
      /* keep logs */
    }
    const t1 = Date.now();
    const kept = await cp.stop({ keepDir: failed });
    log(`stopped in ${Date.now() - t1} ms` + (kept ? `; logs and kubeconfig kept in ${cp.dir}${failed ? ' (a test failed)' : ''}` : ''));
  };
}
