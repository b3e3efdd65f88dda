import { useEffect, useState } from 'react';
import { api, type Project } from './api.ts';

interface Role {
  role: string;
  customRoleName: string | null;
  isTemporary?: boolean;
}
interface Member {
  id: string;
  user: { email: string };
  roles: Role[];
}
interface IdentityMember {
  id: string;
  identity: { id: string; name: string; authMethod: string | null };
  roles: Role[];
}

const roleNames = (roles: Role[]) => roles.map((role) => (role.customRoleName ?? role.role) + (role.isTemporary ? ' (temporary)' : '')).join(', ');

/** Who may reach the project: its users and machine identities with their roles, as the API lets the caller see them. */
export function Access({ project }: { project: Project }) {
  const [members, setMembers] = useState<Member[]>();
  const [identities, setIdentities] = useState<IdentityMember[]>();
  const [error, setError] = useState<string>();

  useEffect(() => {
    api<{ memberships: Member[] }>('GET', `/api/v1/workspace/${project.id}/memberships`).then(
      (answer) => setMembers(answer.memberships),
      (failure: Error) => setError(failure.message),
    );
    api<{ identityMemberships: IdentityMember[] }>('GET', `/api/v2/workspace/${project.id}/identity-memberships`).then(
      (answer) => setIdentities(answer.identityMemberships),
      (failure: Error) => setError(failure.message),
    );
  }, [project.id]);

  return (
    <section aria-labelledby="access-title">
      <h1 id="access-title">{project.name}: access</h1>
      {error && <p role="alert">{error}</p>}
      <h2>Members</h2>
      {members && members.length === 0 && <p className="empty">No users are members of this project yet.</p>}
      {members && members.length > 0 && (
        <table>
          <thead>
            <tr>
              <th scope="col">User</th>
              <th scope="col">Roles</th>
            </tr>
          </thead>
          <tbody>
            {members.map((member) => (
              <tr key={member.id}>
                <td>{member.user.email}</td>
                <td>{roleNames(member.roles)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <h2>Machine identities</h2>
      {identities && identities.length === 0 && (
        <p className="empty">No machine identity can reach this project. Add one with the API (POST /api/v2/workspace/:projectId/identity-memberships/:identityId).</p>
      )}
      {identities && identities.length > 0 && (
        <table>
          <thead>
            <tr>
              <th scope="col">Identity</th>
              <th scope="col">Login method</th>
              <th scope="col">Roles</th>
            </tr>
          </thead>
          <tbody>
            {identities.map((membership) => (
              <tr key={membership.id}>
                <td>{membership.identity.name}</td>
                <td>{membership.identity.authMethod ?? 'none'}</td>
                <td>{roleNames(membership.roles)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
