import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import path from 'node:path';
import { KubeConfig } from '../kubernetes/client-node.ts';
import { CliError, EXIT } from './exit-codes.ts';

/** Where the Kubernetes credentials of a command come from, for messages that must name them. */
export interface LoadedKubeConfig {
  kubeConfig: KubeConfig;
  /** "kubeconfig /path (context c)" or "the in-cluster service account". */
  source: string;
}

/**
 * The kubeconfig as kubectl finds it (KUBECONFIG, ~/.kube/config, or the
 * in-cluster service account), or a configuration error naming what was
 * looked for. The client library alone falls back to http://localhost:8080
 * when it finds nothing, and its errors then blame whatever is called next.
 */
export function loadKubeConfig(): LoadedKubeConfig {
  const fromEnv = process.env.KUBECONFIG;
  const files = fromEnv ? fromEnv.split(path.delimiter).filter(Boolean) : [path.join(homedir(), '.kube', 'config')];
  const inCluster = Boolean(process.env.KUBERNETES_SERVICE_HOST);
  const existing = files.filter((file) => existsSync(file));
  if (fromEnv && existing.length < files.length) {
    throw new CliError(`KUBECONFIG names ${files.filter((file) => !existing.includes(file)).join(', ')}, which does not exist`, EXIT.configuration);
  }
  if (existing.length === 0 && !inCluster) {
    throw new CliError('no Kubernetes configuration found: set KUBECONFIG, create ~/.kube/config, or run it in a cluster (service account)', EXIT.configuration);
  }
  const kubeConfig = new KubeConfig();
  try {
    kubeConfig.loadFromDefault();
  } catch (error) {
    throw new CliError(`cannot read the Kubernetes configuration ${existing.join(', ')}: ${error instanceof Error ? error.message : String(error)}`, EXIT.configuration);
  }
  if (!kubeConfig.getCurrentCluster()) throw new CliError(`the Kubernetes configuration ${existing.join(', ')} has no current cluster`, EXIT.configuration);
  const source = existing.length > 0 ? `kubeconfig ${existing.join(', ')} (context ${kubeConfig.getCurrentContext()})` : 'the in-cluster service account';
  return { kubeConfig, source };
}

/** One line for a failed Kubernetes API call: the apiserver's status, or what stopped the request (and its cause). */
export function kubeFailureReason(error: unknown): string {
  const status = (error as { code?: unknown }).code;
  if (typeof status === 'number') return `the apiserver answered ${status}`;
  if (!(error instanceof Error)) return String(error);
  return error.cause instanceof Error ? `${error.message}: ${error.cause.message}` : error.message;
}
