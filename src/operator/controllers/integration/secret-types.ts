import type { IntegrationResource } from '../../resources.ts';
import { NotReadyError } from '../context.ts';

/** What the apiserver requires of the built-in Secret types (k8s.io/api core/v1), checked before writing. */
const TYPE_RULES: Record<string, { all?: string[]; oneOf?: string[]; json?: string }> = {
  'kubernetes.io/tls': { all: ['tls.crt', 'tls.key'] },
  'kubernetes.io/dockerconfigjson': { all: ['.dockerconfigjson'], json: '.dockerconfigjson' },
  'kubernetes.io/dockercfg': { all: ['.dockercfg'], json: '.dockercfg' },
  'kubernetes.io/basic-auth': { oneOf: ['username', 'password'] },
  'kubernetes.io/ssh-auth': { all: ['ssh-privatekey'] },
};

/** Types Kubernetes fills itself: a copy written by Coffer would be refused or overwritten. */
const FILLED_BY_KUBERNETES = new Set(['kubernetes.io/service-account-token']);

/**
 * Refuses data the apiserver would refuse for the Secret's type, with a
 * message of Coffer's own: the apiserver's message for a malformed
 * .dockerconfigjson quotes a character of the value. Nothing is written.
 */
export function checkSecretType(resource: IntegrationResource, data: Record<string, string>): void {
  const type = resource.spec.target.template?.type ?? resource.spec.target.type ?? 'Opaque';
  const name = resource.spec.target.name;
  if (FILLED_BY_KUBERNETES.has(type)) {
    throw new NotReadyError('SecretTypeUnsupported', `Secrets of type ${type} are filled by Kubernetes; Coffer does not write Secret '${name}'`);
  }
  const rule = TYPE_RULES[type];
  if (!rule) return;
  const kept = `Nothing was written: Secret '${name}' keeps its last data`;
  const missing = (rule.all ?? []).filter((key) => !(key in data));
  if (missing.length > 0) {
    throw new NotReadyError(
      'SecretTypeMismatch',
      `a Secret of type ${type} needs ${quote(missing, 'and')}, which the data lacks. ${kept} (add the keys, or render them with target.template.data)`,
    );
  }
  if (rule.oneOf && !rule.oneOf.some((key) => key in data)) {
    throw new NotReadyError('SecretTypeMismatch', `a Secret of type ${type} needs ${quote(rule.oneOf, 'or')}, which the data lacks. ${kept}`);
  }
  if (rule.json && !isJsonObject(data[rule.json]!)) {
    throw new NotReadyError('SecretTypeMismatch', `a Secret of type ${type} needs '${rule.json}' to hold a JSON object; it does not. ${kept}`);
  }
}

function quote(keys: readonly string[], joiner: 'and' | 'or'): string {
  const quoted = keys.map((key) => `'${key}'`);
  return quoted.length === 1 ? `the key ${quoted[0]}` : `the keys ${quoted.slice(0, -1).join(', ')} ${joiner} ${quoted.at(-1)}`;
}

function isJsonObject(value: string): boolean {
  try {
    const parsed: unknown = JSON.parse(value);
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed);
  } catch {
    return false;
  }
}
