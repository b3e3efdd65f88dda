import { api } from './api.ts';

/** The API of the access screens: members, machine identities and their client secrets, roles, namespace grants. */
export interface MembershipRole {
  role: string;
  customRoleSlug: string | null;
  customRoleName: string | null;
  isTemporary?: boolean;
}
export interface ProjectMember {
  id: string;
  user: { id: string; email: string };
  roles: MembershipRole[];
}
export interface ProjectIdentity {
  id: string;
  identity: { id: string; name: string; authMethod: string | null };
  roles: MembershipRole[];
}
export interface OrgUser {
  id: string;
  role: string;
  status: string;
  inviteEmail: string | null;
  user: { id: string; email: string };
}
export interface OrgIdentity {
  identity: { id: string; name: string; authMethod: string | null };
  role: string;
}
export interface Rule {
  subject: string;
  action: string[];
  conditions?: Record<string, unknown>;
  inverted?: boolean;
}
export interface Role {
  id: string;
  name: string;
  slug: string;
  description: string | null;
  permissions: Rule[];
  isBuiltIn: boolean;
}
export interface Grant {
  id: string;
  cluster: string;
  namespace: string;
  origin: string;
  grantedBy: { type: string; name: string };
  createdAt: string;
}
export interface ClientSecretData {
  id: string;
  description: string;
  clientSecretPrefix: string;
  clientSecretNumUses: number;
  clientSecretNumUsesLimit: number;
  clientSecretTTL: number;
  createdAt: string;
}
export interface Invite {
  email: string;
  inviteToken: string;
  expiresAt: string;
}

const project = (projectId: string) => `/api/v1/workspace/${encodeURIComponent(projectId)}`;
const identityMembership = (projectId: string, identityId: string) =>
  `/api/v2/workspace/${encodeURIComponent(projectId)}/identity-memberships/${encodeURIComponent(identityId)}`;
const universalAuth = (identityId: string) => `/api/v1/auth/universal-auth/identities/${encodeURIComponent(identityId)}`;
const oneRole = (role: string) => [{ role, isTemporary: false }];

export const membersApi = {
  list: (projectId: string) => api<{ memberships: ProjectMember[] }>('GET', `${project(projectId)}/memberships`).then((r) => r.memberships),
  add: (projectId: string, email: string, role: string) =>
    api('POST', `/api/v2/workspace/${encodeURIComponent(projectId)}/memberships`, { body: { emails: [email], roleSlugs: [role] } }),
  setRole: (projectId: string, membershipId: string, role: string) =>
    api('PATCH', `${project(projectId)}/memberships/${encodeURIComponent(membershipId)}`, { body: { roles: oneRole(role) } }),
  remove: (projectId: string, membershipId: string) => api('DELETE', `${project(projectId)}/memberships/${encodeURIComponent(membershipId)}`),
};

export const projectIdentitiesApi = {
  list: (projectId: string) =>
    api<{ identityMemberships: ProjectIdentity[] }>('GET', `/api/v2/workspace/${encodeURIComponent(projectId)}/identity-memberships`).then((r) => r.identityMemberships),
  add: (projectId: string, identityId: string, role: string) => api('POST', identityMembership(projectId, identityId), { body: { roles: oneRole(role) } }),
  setRole: (projectId: string, identityId: string, role: string) => api('PATCH', identityMembership(projectId, identityId), { body: { roles: oneRole(role) } }),
  remove: (projectId: string, identityId: string) => api('DELETE', identityMembership(projectId, identityId)),
};

export const rolesApi = {
  list: (projectId: string) => api<{ roles: Role[] }>('GET', `${project(projectId)}/roles`).then((r) => r.roles),
  create: (projectId: string, role: Pick<Role, 'slug' | 'name' | 'description' | 'permissions'>) => api('POST', `${project(projectId)}/roles`, { body: role }),
  update: (projectId: string, roleId: string, role: Pick<Role, 'slug' | 'name' | 'description' | 'permissions'>) =>
    api('PATCH', `${project(projectId)}/roles/${encodeURIComponent(roleId)}`, { body: role }),
  remove: (projectId: string, roleId: string) => api('DELETE', `${project(projectId)}/roles/${encodeURIComponent(roleId)}`),
};

export const grantsApi = {
  list: (projectId: string) => api<{ grants: Grant[] }>('GET', `${project(projectId)}/namespace-grants`).then((r) => r.grants),
  create: (projectId: string, namespace: string, cluster?: string) => api('POST', `${project(projectId)}/namespace-grants`, { body: { namespace, cluster } }),
  revoke: (projectId: string, grantId: string) => api('DELETE', `${project(projectId)}/namespace-grants/${encodeURIComponent(grantId)}`),
};

export const orgApi = {
  users: (orgId: string) => api<{ users: OrgUser[] }>('GET', `/api/v2/organizations/${encodeURIComponent(orgId)}/memberships`).then((r) => r.users),
  invite: (organizationId: string, email: string, role: string) =>
    api<{ invites: Invite[] }>('POST', '/api/v1/invite-org/signup', { body: { inviteeEmails: [email], organizationId, organizationRoleSlug: role } }).then(
      (r) => r.invites,
    ),
  identities: () => api<{ identities: OrgIdentity[] }>('GET', '/api/v1/identities').then((r) => r.identities),
  createIdentity: (organizationId: string, name: string, role: string) =>
    api<{ identity: { id: string } }>('POST', '/api/v1/identities', { body: { name, organizationId, role } }).then((r) => r.identity),
  deleteIdentity: (identityId: string) => api('DELETE', `/api/v1/identities/${encodeURIComponent(identityId)}`),
};

export const universalAuthApi = {
  get: (identityId: string) => api<{ identityUniversalAuth: { clientId: string } }>('GET', universalAuth(identityId)).then((r) => r.identityUniversalAuth),
  attach: (identityId: string) => api('POST', universalAuth(identityId), { body: {} }),
  clientSecrets: (identityId: string) =>
    api<{ clientSecretData: ClientSecretData[] }>('GET', `${universalAuth(identityId)}/client-secrets`).then((r) => r.clientSecretData),
  /** The one answer that holds the new client secret. */
  createClientSecret: (identityId: string, description: string) =>
    api<{ clientSecret: string }>('POST', `${universalAuth(identityId)}/client-secrets`, { body: { description } }).then((r) => r.clientSecret),
  revokeClientSecret: (identityId: string, clientSecretId: string) =>
    api('POST', `${universalAuth(identityId)}/client-secrets/${encodeURIComponent(clientSecretId)}/revoke`),
};

/** What the signed-in user may do in a project, as the API answers for them. */
export function projectPermissions(projectId: string) {
  return api<{ permissions: { subject: string; actions: string[] }[] }>('GET', `${project(projectId)}/effective-permissions`).then((r) => {
    const bySubject = new Map(r.permissions.map((entry) => [entry.subject, new Set(entry.actions)]));
    return (action: string, subject: string) => bySubject.get(subject)?.has(action) ?? false;
  });
}
export type Can = (action: string, subject: string) => boolean;

export const roleLabel = (roles: MembershipRole[]) => roles.map((role) => (role.customRoleName ?? role.role) + (role.isTemporary ? ' (temporary)' : '')).join(', ');
/** The slug of a membership's first permanent role, as a role select shows it. */
export const roleSlugOf = (roles: MembershipRole[]) => {
  const permanent = roles.find((role) => !role.isTemporary) ?? roles[0];
  return permanent?.customRoleSlug ?? permanent?.role ?? '';
};
