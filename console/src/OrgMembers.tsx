import { type FormEvent, useState } from 'react';
import { type Invite, orgApi } from './access-api.ts';
import type { Session } from './api.ts';
import { field } from './form-field.ts';
import { OneTimeSecret } from './OneTimeSecret.tsx';
import { describeFailure, useResource } from './resource.tsx';

const ORG_ROLES = ['member', 'admin', 'no-access'];

/** The organization's users, invited and joined; an invite answers its token once, to hand to the user. */
export function OrgMembers({ session }: { session: Session }) {
  const users = useResource(() => orgApi.users(session.organizationId), [session.organizationId]);
  const [invite, setInvite] = useState<Invite>();
  const [error, setError] = useState<string>();

  async function send(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const form = event.currentTarget;
    const data = new FormData(form);
    try {
      const [made] = await orgApi.invite(session.organizationId, field(data, 'email').trim(), field(data, 'role'));
      setInvite(made);
      setError(undefined);
      form.reset();
      await users.reload();
    } catch (failure) {
      setError(describeFailure(failure));
    }
  }

  return (
    <section aria-labelledby="members-title">
      <h1 id="members-title">Organization members</h1>
      {(error ?? users.error) && <p role="alert">{error ?? users.error}</p>}
      {invite && (
        <OneTimeSecret
          label={`Invite token for ${invite.email} (until ${new Date(invite.expiresAt).toLocaleString()}; they accept it with POST /api/v1/invite-org/accept)`}
          value={invite.inviteToken}
          onDone={() => setInvite(undefined)}
        />
      )}
      {users.data && (
        <table>
          <thead>
            <tr>
              <th scope="col">User</th>
              <th scope="col">Organization role</th>
              <th scope="col">Status</th>
            </tr>
          </thead>
          <tbody>
            {users.data.map((member) => (
              <tr key={member.id}>
                <th scope="row">{member.user.email || member.inviteEmail}</th>
                <td>{member.role}</td>
                <td>{member.status}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <form onSubmit={send} className="inline" aria-label="Invite a user">
        <label>
          Email
          <input name="email" type="email" required />
        </label>
        <label>
          Organization role
          <select name="role" defaultValue="member">
            {ORG_ROLES.map((role) => (
              <option key={role}>{role}</option>
            ))}
          </select>
        </label>
        <button type="submit">Invite</button>
      </form>
      <p className="muted">To give a member access to a project, add them on the project&apos;s Access screen.</p>
    </section>
  );
}
