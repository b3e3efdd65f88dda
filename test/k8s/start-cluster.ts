/**
 * Starts the test control plane by hand and keeps it running until Ctrl-C (for debugging and for
 * running the operator against it):
 *   node_modules/.bin/node test/k8s/start-cluster.ts [--no-kcm]
 * then, in another shell: export KUBECONFIG=<printed path>
 * Its temp dir is deleted on exit unless COFFER_KEEP_CLUSTER_LOGS=1.
 */
import { ensureTestBinaries, startControlPlane } from './controlplane.ts';

const log = (m: string) => process.stderr.write(`[control plane] ${m}\n`);
const binDir = await ensureTestBinaries({ log });
const cp = await startControlPlane({ binDir, log, controllerManager: !process.argv.includes('--no-kcm') });
log(`timings (ms since start): ${JSON.stringify(cp.timings)}`);
log(`CRDs: ${cp.crds.join(', ') || 'none'}`);
process.stdout.write(`export KUBECONFIG=${cp.kubeconfigPath}\n`);
log('running; Ctrl-C to stop');

// Ctrl-C / SIGTERM: controlplane.ts's signal handlers kill the processes and remove the temp dir
// (unless COFFER_KEEP_CLUSTER_LOGS=1), then let the signal end this process.
setInterval(() => {}, 1 << 30);
