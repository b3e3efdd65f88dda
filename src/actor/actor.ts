export type UserAgentType = 'web' | 'cli' | 'k8-operator' | 'terraform' | 'other' | 'InfisicalNodeSDK' | 'InfisicalPythonSDK' | 'ServiceNodeSDK' | 'ServicePythonSDK';

/** Where a call came from; recorded in the audit log. */
export interface RequestOrigin {
  ip: string | null;
  userAgent: string | null;
  userAgentType: UserAgentType;
}

/** Who is calling a service: resolved from an access token, or the operator in-process. */
export interface Actor extends RequestOrigin {
  kind: 'user' | 'identity';
  id: string;
  /** Identity name or user email, for audit metadata. */
  name: string;
  orgId: string;
  orgRole: string;
  tokenId: string | null;
  authMethod: string | null;
  /**
   * The cluster this caller acts for: the registered cluster its identity is bound to, or the in-process
   * operator's own. Never taken from a request; undefined for every other caller.
   */
  cluster?: string;
}

/** The audit log's `actor.metadata` for an actor. */
export function actorMetadata(actor: Actor): Record<string, string> {
  if (actor.kind === 'user') return { userId: actor.id, email: actor.name, username: actor.name };
  return actor.cluster === undefined ? { identityId: actor.id, name: actor.name } : { identityId: actor.id, name: actor.name, cluster: actor.cluster };
}

/**
 * userAgentType from a User-Agent header, in the reference's order. The SDKs
 * are recorded with the spelling the client sent.
 */
export function detectUserAgentType(userAgent: string | undefined | null): UserAgentType {
  if (!userAgent) return 'other';
  if (userAgent === 'cli') return 'cli';
  if (userAgent === 'k8-operator' || userAgent.startsWith('k8-operator/')) return 'k8-operator';
  if (userAgent === 'terraform' || userAgent.startsWith('terraform/')) return 'terraform';
  if (/mozilla/i.test(userAgent)) return 'web';
  for (const sdk of ['InfisicalNodeSDK', 'InfisicalPythonSDK', 'ServiceNodeSDK', 'ServicePythonSDK'] as const) {
    if (userAgent.includes(sdk)) return sdk;
  }
  return 'other';
}
