import { GROUP, KINDS } from '../resources.ts';
import type { Permission } from './kube-api.ts';

/**
 * Every Kubernetes permission the operator needs (deploy/common/rbac.yaml grants
 * exactly these): the three kinds and their status, the Secrets and ConfigMaps it manages,
 * Events, and with leader election its Lease.
 */
export function operatorPermissions(options: { watchNamespace?: string; leaseNamespace: string; leaderElection: boolean }): Permission[] {
  const namespace = options.watchNamespace ?? '';
  const needs: Permission[] = [];
  for (const { plural } of Object.values(KINDS)) {
    for (const verb of ['get', 'list', 'watch', 'patch']) needs.push({ verb, group: GROUP, resource: plural, namespace });
    for (const verb of ['update', 'patch']) needs.push({ verb, group: GROUP, resource: plural, subresource: 'status', namespace });
  }
  for (const resource of ['secrets', 'configmaps']) {
    for (const verb of ['list', 'watch', 'get', 'create', 'patch', 'delete']) needs.push({ verb, group: '', resource, namespace });
  }
  needs.push({ verb: 'create', group: '', resource: 'events', namespace });
  if (options.leaderElection) {
    for (const verb of ['get', 'create', 'update']) needs.push({ verb, group: 'coordination.k8s.io', resource: 'leases', namespace: options.leaseNamespace });
  }
  return needs;
}

/**
 * What the workload reload needs besides (optional: deploy/reload and the
 * chart's reload.enabled grant it): to watch Deployments, StatefulSets and
 * DaemonSets and patch their checksum annotations.
 */
export function reloadPermissions(options: { watchNamespace?: string }): Permission[] {
  const namespace = options.watchNamespace ?? '';
  return ['deployments', 'statefulsets', 'daemonsets'].flatMap((resource) => ['list', 'watch', 'patch'].map((verb) => ({ verb, group: 'apps', resource, namespace })));
}
