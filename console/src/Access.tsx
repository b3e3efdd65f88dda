import { type FormEvent, useCallback } from 'react';
import {
  type Can,
  membersApi,
  orgApi,
  type ProjectIdentity,
  type ProjectMember,
  projectIdentitiesApi,
  projectPermissions,
  roleLabel,
  roleSlugOf,
  rolesApi,
} from './access-api.ts';
import type { Project } from './api.ts';
import { field } from './form-field.ts';
import { Grants } from './Grants.tsx';
import { Confirmed, NoticeLine, useResource, useWrite } from './resource.tsx';
import { Roles } from './Roles.tsx';

type Run = (what: () => Promise<unknown>, done: string) => Promise<boolean>;
const BUILT_IN_ROLES = ['admin', 'member', 'viewer', 'no-access'];

/** Who may reach the project and how: members, machine identities, roles and namespace grants; actions follow the caller's permissions. */
export function Access({ project }: { project: Project }) {
  const permissions = useResource(() => projectPermissions(project.id), [project.id]);
  const members = useResource(() => membersApi.list(project.id), [project.id]);
  const identities = useResource(() => projectIdentitiesApi.list(project.id), [project.id]);
  const roles = useResource(() => rolesApi.list(project.id), [project.id]);
  const reload = useCallback(async () => {
    await Promise.all([members.reload(), identities.reload(), roles.reload()]);
  }, [members.reload, identities.reload, roles.reload]);
  const { notice, run } = useWrite(reload);
  const can: Can = permissions.data ?? (() => false);
  const roleSlugs = roles.data?.map((role) => role.slug) ?? BUILT_IN_ROLES;

  return (
    <section aria-labelledby="access-title">
      <h1 id="access-title">{project.name}: access</h1>
      <NoticeLine notice={notice} />
      <h2>Members</h2>
      {members.error && <p role="alert">{members.error}</p>}
      <Members project={project} members={members.data} roleSlugs={roleSlugs} can={can} run={run} />
      <h2>Machine identities</h2>
      {identities.error && <p role="alert">{identities.error}</p>}
      <Identities project={project} identities={identities.data} roleSlugs={roleSlugs} can={can} run={run} />
      <h2>Roles</h2>
      {roles.error && <p role="alert">{roles.error}</p>}
      {roles.data && <Roles project={project} roles={roles.data} can={can} run={run} />}
      <h2>Namespace grants</h2>
      <Grants project={project} can={can} />
    </section>
  );
}

function RoleSelect({ label, name, slugs, value, onChange }: { label: string; name?: string; slugs: string[]; value?: string; onChange?: (slug: string) => void }) {
  return (
    <label>
      {label}
      {/* a role change is applied by the API first: the select shows the role held until then */}
      <select name={name} {...(onChange ? { value, onChange: (event) => onChange(event.target.value) } : { defaultValue: 'member' })}>
        {slugs.map((slug) => (
          <option key={slug}>{slug}</option>
        ))}
      </select>
    </label>
  );
}

interface ListProps<T> {
  project: Project;
  roleSlugs: string[];
  can: Can;
  run: Run;
  members?: T[];
  identities?: T[];
}

function Members({ project, members, roleSlugs, can, run }: ListProps<ProjectMember>) {
  async function add(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const form = event.currentTarget;
    const data = new FormData(form);
    const email = field(data, 'email').trim();
    if (await run(() => membersApi.add(project.id, email, field(data, 'role')), `Added ${email}`)) form.reset();
  }
  return (
    <>
      {members && members.length === 0 && <p className="empty">No users are members of this project yet.</p>}
      {members && members.length > 0 && (
        <table>
          <thead>
            <tr>
              <th scope="col">User</th>
              <th scope="col">Roles</th>
              <th scope="col">Actions</th>
            </tr>
          </thead>
          <tbody>
            {members.map((member) => (
              <tr key={member.id}>
                <th scope="row">{member.user.email}</th>
                <td>{roleLabel(member.roles)}</td>
                <td className="actions">
                  {can('edit', 'member') && (
                    <RoleSelect
                      label={`Role of ${member.user.email}`}
                      slugs={roleSlugs}
                      value={roleSlugOf(member.roles)}
                      onChange={(slug) => void run(() => membersApi.setRole(project.id, member.id, slug), `${member.user.email} is now ${slug}`)}
                    />
                  )}
                  {can('delete', 'member') && (
                    <Confirmed
                      label={`Remove ${member.user.email}`}
                      question={`Remove ${member.user.email} from ${project.name}?`}
                      text="Remove"
                      onConfirm={() => run(() => membersApi.remove(project.id, member.id), `Removed ${member.user.email}`)}
                    />
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {can('create', 'member') && (
        <form onSubmit={add} className="inline" aria-label="Add a member">
          <label>
            Email of an organization user
            <input name="email" type="email" required />
          </label>
          <RoleSelect label="Role" name="role" slugs={roleSlugs} />
          <button type="submit">Add member</button>
        </form>
      )}
    </>
  );
}

function Identities({ project, identities, roleSlugs, can, run }: ListProps<ProjectIdentity>) {
  const mayAdd = can('create', 'identity');
  const organization = useResource(() => (mayAdd ? orgApi.identities() : Promise.resolve([])), [mayAdd]);
  const outside = organization.data?.filter((candidate) => !identities?.some((member) => member.identity.id === candidate.identity.id)) ?? [];

  async function add(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const data = new FormData(event.currentTarget);
    const chosen = outside.find((candidate) => candidate.identity.id === field(data, 'identity'));
    if (chosen) await run(() => projectIdentitiesApi.add(project.id, chosen.identity.id, field(data, 'role')), `Added ${chosen.identity.name}`);
  }
  return (
    <>
      {identities && identities.length === 0 && (
        <p className="empty">No machine identity can reach this project. Create one under Organization → Identities, then add it here.</p>
      )}
      {identities && identities.length > 0 && (
        <table>
          <thead>
            <tr>
              <th scope="col">Identity</th>
              <th scope="col">Login method</th>
              <th scope="col">Roles</th>
              <th scope="col">Actions</th>
            </tr>
          </thead>
          <tbody>
            {identities.map((membership) => (
              <tr key={membership.id}>
                <th scope="row">{membership.identity.name}</th>
                <td>{membership.identity.authMethod ?? 'none'}</td>
                <td>{roleLabel(membership.roles)}</td>
                <td className="actions">
                  {can('edit', 'identity') && (
                    <RoleSelect
                      label={`Role of ${membership.identity.name}`}
                      slugs={roleSlugs}
                      value={roleSlugOf(membership.roles)}
                      onChange={(slug) =>
                        void run(() => projectIdentitiesApi.setRole(project.id, membership.identity.id, slug), `${membership.identity.name} is now ${slug}`)
                      }
                    />
                  )}
                  {can('delete', 'identity') && (
                    <Confirmed
                      label={`Remove ${membership.identity.name}`}
                      question={`Remove ${membership.identity.name} from ${project.name}?`}
                      text="Remove"
                      onConfirm={() => run(() => projectIdentitiesApi.remove(project.id, membership.identity.id), `Removed ${membership.identity.name}`)}
                    />
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {mayAdd && outside.length > 0 && (
        <form onSubmit={add} className="inline" aria-label="Add an identity">
          <label>
            Identity
            <select name="identity">
              {outside.map((candidate) => (
                <option key={candidate.identity.id} value={candidate.identity.id}>
                  {candidate.identity.name}
                </option>
              ))}
            </select>
          </label>
          <RoleSelect label="Role" name="role" slugs={roleSlugs} />
          <button type="submit">Add identity</button>
        </form>
      )}
    </>
  );
}
