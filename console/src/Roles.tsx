import { type FormEvent, useState } from 'react';
import { type Can, type Role, rolesApi, type Rule } from './access-api.ts';
import type { Project } from './api.ts';
import { field } from './form-field.ts';
import { Confirmed } from './resource.tsx';

type Run = (what: () => Promise<unknown>, done: string) => Promise<boolean>;
const ACTIONS = ['read', 'create', 'edit', 'delete'];
/** The subjects whose rules may name environments and secret paths (the API refuses conditions elsewhere). */
const CONDITIONAL = new Set(['secrets', 'secret-folders', 'secret-imports']);

function describeRule(rule: Rule): string {
  const where = rule.conditions ? ` where ${JSON.stringify(rule.conditions)}` : '';
  return `${rule.inverted ? 'cannot' : 'can'} ${rule.action.join('/')} ${rule.subject}${where}`;
}

/** A rule the form's grid can show: one allowing rule per subject, narrowed at most by one environment and one path. */
function fitsGrid(rules: Rule[]): boolean {
  const subjects = new Set<string>();
  return rules.every((rule) => {
    if (rule.inverted || subjects.has(rule.subject)) return false;
    subjects.add(rule.subject);
    const { environment, secretPath, ...other } = (rule.conditions ?? {}) as { environment?: unknown; secretPath?: unknown };
    const pathOk = secretPath === undefined || typeof secretPath === 'string' || typeof (secretPath as { $glob?: unknown }).$glob === 'string';
    return Object.keys(other).length === 0 && (environment === undefined || typeof environment === 'string') && pathOk;
  });
}

function conditionText(rule: Rule | undefined, name: 'environment' | 'secretPath'): string {
  const value = rule?.conditions?.[name] as string | { $glob: string } | undefined;
  return typeof value === 'string' ? value : (value?.$glob ?? '');
}

function rulesFrom(form: FormData, subjects: string[]): Rule[] {
  return subjects.flatMap((subject) => {
    const action = ACTIONS.filter((name) => form.get(`${subject}:${name}`) === 'on');
    if (action.length === 0) return [];
    const environment = field(form, `${subject}:environment`).trim();
    const secretPath = field(form, `${subject}:secretPath`).trim();
    const conditions = { ...(environment && { environment }), ...(secretPath && { secretPath: { $glob: secretPath } }) };
    return [{ subject, action, ...(Object.keys(conditions).length > 0 && { conditions }) }];
  });
}

/** The project's roles, built-in and custom; custom ones are made and changed as a grid of subjects and actions. */
export function Roles({ project, roles, can, run }: { project: Project; roles: Role[]; can: Can; run: Run }) {
  const [editing, setEditing] = useState<Role | 'new'>();
  // the built-in admin role holds every subject: the grid's rows are the API's own list
  const subjects = roles.find((role) => role.slug === 'admin')?.permissions.map((rule) => rule.subject) ?? [];

  async function save(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const role = {
      slug: field(form, 'slug').trim(),
      name: field(form, 'name').trim(),
      description: field(form, 'description').trim() || null,
      permissions: rulesFrom(form, subjects),
    };
    const saved =
      editing === 'new'
        ? await run(() => rolesApi.create(project.id, role), `Created role ${role.slug}`)
        : await run(() => rolesApi.update(project.id, editing!.id, role), `Saved role ${role.slug}`);
    if (saved) setEditing(undefined);
  }

  return (
    <>
      <table>
        <thead>
          <tr>
            <th scope="col">Role</th>
            <th scope="col">Slug</th>
            <th scope="col">Rules</th>
            <th scope="col">Actions</th>
          </tr>
        </thead>
        <tbody>
          {roles.map((role) => (
            <tr key={role.id}>
              <th scope="row">{role.name}</th>
              <td>
                <code>{role.slug}</code>
              </td>
              <td>{role.isBuiltIn ? (role.description ?? 'built in') : <span className="rules">{role.permissions.map(describeRule).join('; ') || 'no rules'}</span>}</td>
              <td className="actions">
                {!role.isBuiltIn && can('edit', 'role') && fitsGrid(role.permissions) && (
                  <button type="button" aria-label={`Edit role ${role.slug}`} onClick={() => setEditing(role)}>
                    Edit
                  </button>
                )}
                {!role.isBuiltIn && can('delete', 'role') && (
                  <Confirmed
                    label={`Delete role ${role.slug}`}
                    question={`Delete role ${role.slug}?`}
                    text="Delete"
                    onConfirm={() => run(() => rolesApi.remove(project.id, role.id), `Deleted role ${role.slug}`)}
                  />
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {!editing && can('create', 'role') && (
        <button type="button" onClick={() => setEditing('new')}>
          New custom role
        </button>
      )}
      {editing && (
        <RoleForm
          key={editing === 'new' ? 'new' : editing.id}
          role={editing === 'new' ? undefined : editing}
          subjects={subjects}
          onSubmit={save}
          onCancel={() => setEditing(undefined)}
        />
      )}
    </>
  );
}

function RoleForm({
  role,
  subjects,
  onSubmit,
  onCancel,
}: {
  role?: Role;
  subjects: string[];
  onSubmit: (event: FormEvent<HTMLFormElement>) => void;
  onCancel: () => void;
}) {
  const title = role ? `Edit role ${role.slug}` : 'New custom role';
  const ruleOf = (subject: string) => role?.permissions.find((rule) => rule.subject === subject);
  return (
    <form onSubmit={onSubmit} aria-label={title}>
      <h3>{title}</h3>
      <div className="inline">
        <label>
          Slug
          <input name="slug" required defaultValue={role?.slug} pattern="[a-z0-9][a-z0-9\-]*" />
        </label>
        <label>
          Name
          <input name="name" required maxLength={64} defaultValue={role?.name} />
        </label>
        <label>
          Description
          <input name="description" maxLength={500} defaultValue={role?.description ?? ''} />
        </label>
      </div>
      <table className="grid">
        <caption className="sr-only">Permissions of the role</caption>
        <thead>
          <tr>
            <th scope="col">Subject</th>
            {ACTIONS.map((action) => (
              <th scope="col" key={action}>
                {action}
              </th>
            ))}
            <th scope="col">Only in environment</th>
            <th scope="col">Only under path (glob)</th>
          </tr>
        </thead>
        <tbody>
          {subjects.map((subject) => (
            <tr key={subject}>
              <th scope="row">{subject}</th>
              {ACTIONS.map((action) => (
                <td key={action}>
                  <input type="checkbox" name={`${subject}:${action}`} aria-label={`${action} ${subject}`} defaultChecked={ruleOf(subject)?.action.includes(action)} />
                </td>
              ))}
              {CONDITIONAL.has(subject) ? (
                <>
                  <td>
                    <input name={`${subject}:environment`} aria-label={`Environment of ${subject}`} defaultValue={conditionText(ruleOf(subject), 'environment')} />
                  </td>
                  <td>
                    <input
                      name={`${subject}:secretPath`}
                      aria-label={`Path of ${subject}`}
                      defaultValue={conditionText(ruleOf(subject), 'secretPath')}
                      placeholder="/app/**"
                    />
                  </td>
                </>
              ) : (
                <td colSpan={2} />
              )}
            </tr>
          ))}
        </tbody>
      </table>
      <button type="submit">{role ? 'Save role' : 'Create role'}</button>
      <button type="button" onClick={onCancel}>
        Cancel
      </button>
    </form>
  );
}
