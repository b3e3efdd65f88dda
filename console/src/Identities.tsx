import { type FormEvent, useState } from 'react';
import { type OrgIdentity, orgApi, universalAuthApi } from './access-api.ts';
import type { Session } from './api.ts';
import { field } from './form-field.ts';
import { OneTimeSecret } from './OneTimeSecret.tsx';
import { Confirmed, describeFailure, NoticeLine, useResource, useWrite } from './resource.tsx';

type Run = (what: () => Promise<unknown>, done: string) => Promise<boolean>;
const ORG_ROLES = ['no-access', 'member', 'admin'];

/** The organization's machine identities: create, delete, and their universal-auth client secrets. */
export function Identities({ session }: { session: Session }) {
  const identities = useResource(() => orgApi.identities(), [session.organizationId]);
  const { notice, run } = useWrite(identities.reload);
  const [open, setOpen] = useState<string>();

  async function create(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const form = event.currentTarget;
    const data = new FormData(form);
    const name = field(data, 'name').trim();
    let created: string | undefined;
    const done = await run(async () => {
      created = (await orgApi.createIdentity(session.organizationId, name, field(data, 'role'))).id;
      await universalAuthApi.attach(created);
    }, `Created ${name} with universal auth: create a client secret for it below`);
    if (done) {
      form.reset();
      setOpen(created);
    }
  }

  return (
    <section aria-labelledby="identities-title">
      <h1 id="identities-title">Machine identities</h1>
      <NoticeLine notice={notice} />
      {identities.error && <p role="alert">{identities.error}</p>}
      {identities.data?.length === 0 && <p className="empty">No machine identity yet. Create one below for a CI job or a service, then give it a client secret.</p>}
      {identities.data && identities.data.length > 0 && (
        <table>
          <thead>
            <tr>
              <th scope="col">Identity</th>
              <th scope="col">Organization role</th>
              <th scope="col">Login method</th>
              <th scope="col">Actions</th>
            </tr>
          </thead>
          <tbody>
            {identities.data.map((entry) => (
              <IdentityLine
                key={entry.identity.id}
                entry={entry}
                open={open === entry.identity.id}
                onToggle={() => setOpen(open === entry.identity.id ? undefined : entry.identity.id)}
                run={run}
              />
            ))}
          </tbody>
        </table>
      )}
      <form onSubmit={create} className="inline" aria-label="Create an identity">
        <label>
          Name
          <input name="name" required maxLength={64} />
        </label>
        <label>
          Organization role
          <select name="role" defaultValue="no-access">
            {ORG_ROLES.map((role) => (
              <option key={role}>{role}</option>
            ))}
          </select>
        </label>
        <button type="submit">Create identity</button>
      </form>
    </section>
  );
}

function IdentityLine({ entry, open, onToggle, run }: { entry: OrgIdentity; open: boolean; onToggle: () => void; run: Run }) {
  const { identity } = entry;
  return (
    <>
      <tr>
        <th scope="row">{identity.name}</th>
        <td>{entry.role}</td>
        <td>{identity.authMethod ?? 'none'}</td>
        <td className="actions">
          {identity.authMethod === null ? (
            <button type="button" onClick={() => void run(() => universalAuthApi.attach(identity.id), `${identity.name} may now log in with universal auth`)}>
              Turn on universal auth
            </button>
          ) : (
            <button type="button" aria-expanded={open} aria-label={`Client secrets of ${identity.name}`} onClick={onToggle}>
              Client secrets
            </button>
          )}
          <Confirmed
            label={`Delete ${identity.name}`}
            question={`Delete ${identity.name}? Its tokens stop working at once.`}
            text="Delete"
            onConfirm={() => run(() => orgApi.deleteIdentity(identity.id), `Deleted ${identity.name}`)}
          />
        </td>
      </tr>
      {open && (
        <tr>
          <td colSpan={4}>
            <ClientSecrets identityId={identity.id} name={identity.name} universalAuth={identity.authMethod === 'universal-auth'} />
          </td>
        </tr>
      )}
    </>
  );
}

/** One identity's universal auth: its client id, its client secrets (never their values), a new one shown once, revoke. */
function ClientSecrets({ identityId, name, universalAuth }: { identityId: string; name: string; universalAuth: boolean }) {
  const config = useResource(() => (universalAuth ? universalAuthApi.get(identityId) : Promise.resolve(undefined)), [identityId, universalAuth]);
  const secrets = useResource(() => (universalAuth ? universalAuthApi.clientSecrets(identityId) : Promise.resolve([])), [identityId, universalAuth]);
  const { notice, run } = useWrite(secrets.reload);
  const [created, setCreated] = useState<string>();
  const [error, setError] = useState<string>();

  async function create(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const form = event.currentTarget;
    try {
      setCreated(await universalAuthApi.createClientSecret(identityId, field(new FormData(form), 'description').trim()));
      setError(undefined);
      form.reset();
      await secrets.reload();
    } catch (failure) {
      setError(describeFailure(failure));
    }
  }

  if (!universalAuth) return <p className="empty">{name} logs in another way (Kubernetes or JWT auth), set up with the API.</p>;
  return (
    <div role="region" aria-label={`Universal auth of ${name}`}>
      {config.data && (
        <p>
          Client id: <code>{config.data.clientId}</code>
        </p>
      )}
      <NoticeLine notice={notice} />
      {(error ?? secrets.error ?? config.error) && <p role="alert">{error ?? secrets.error ?? config.error}</p>}
      {created && <OneTimeSecret label={`New client secret of ${name}`} value={created} onDone={() => setCreated(undefined)} />}
      {secrets.data?.length === 0 && <p className="empty">No client secret yet: create one to let {name} log in.</p>}
      {secrets.data && secrets.data.length > 0 && (
        <table>
          <caption className="sr-only">Client secrets of {name}</caption>
          <thead>
            <tr>
              <th scope="col">Starts with</th>
              <th scope="col">Description</th>
              <th scope="col">Uses</th>
              <th scope="col">Created</th>
              <th scope="col">Actions</th>
            </tr>
          </thead>
          <tbody>
            {secrets.data.map((secret) => (
              <tr key={secret.id}>
                <th scope="row">
                  <code>{secret.clientSecretPrefix}…</code>
                </th>
                <td>{secret.description}</td>
                <td>
                  {secret.clientSecretNumUses}
                  {secret.clientSecretNumUsesLimit > 0 ? ` of ${secret.clientSecretNumUsesLimit}` : ''}
                </td>
                <td>{new Date(secret.createdAt).toLocaleString()}</td>
                <td>
                  <Confirmed
                    label={`Revoke client secret ${secret.clientSecretPrefix}`}
                    question={'Revoke this client secret? Its access tokens stop working at once.'}
                    text="Revoke"
                    onConfirm={() => run(() => universalAuthApi.revokeClientSecret(identityId, secret.id), `Revoked client secret ${secret.clientSecretPrefix}…`)}
                  />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <form onSubmit={create} className="inline" aria-label={`Create a client secret for ${name}`}>
        <label>
          Description
          <input name="description" maxLength={500} />
        </label>
        <button type="submit">Create client secret</button>
      </form>
    </div>
  );
}
