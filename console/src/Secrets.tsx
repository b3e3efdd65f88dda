import { field } from './form-field.ts';
import { type FormEvent, memo, useCallback, useDeferredValue, useEffect, useMemo, useState } from 'react';
import { type Folder, type Place, type Project, type SecretRow, secretsApi } from './api.ts';
import { parseEnvText } from './env-text.ts';
import { History } from './History.tsx';
import { chosenTagIds, type FolderExtras, Imported, loadFolderExtras, PersonalOverride, References, TagPicker } from './SecretExtras.tsx';
import { useLatestRead } from './resource.tsx';
import { navigate, useLocation } from './router.ts';
import { whereHref } from './Where.tsx';

const MASK = '••••••••';

function placeFrom(project: Project, url: URL): Place {
  return {
    projectId: project.id,
    environment: url.searchParams.get('env') ?? project.environments[0]?.slug ?? 'dev',
    secretPath: url.searchParams.get('path') ?? '/',
  };
}

function go(project: Project, place: { environment: string; secretPath: string }) {
  navigate(`/projects/${project.id}?env=${encodeURIComponent(place.environment)}&path=${encodeURIComponent(place.secretPath)}`);
}

function childPath(parent: string, name: string): string {
  return parent === '/' ? `/${name}` : `${parent}/${name}`;
}

export function Secrets({ project }: { project: Project }) {
  const url = useLocation();
  const place = placeFrom(project, url);
  const [secrets, setSecrets] = useState<SecretRow[]>();
  const [folders, setFolders] = useState<Folder[]>([]);
  const [extras, setExtras] = useState<FolderExtras>(NO_EXTRAS);
  const [filter, setFilter] = useState('');
  const [message, setMessage] = useState<{ text: string; error?: boolean }>();
  const placeKey = `${place.environment}\u0000${place.secretPath}`;

  const begin = useLatestRead();
  const load = useCallback(async () => {
    const isLatest = begin();
    try {
      const [listed, children, more] = await Promise.all([secretsApi.list(place), secretsApi.folders(place), loadFolderExtras(place)]);
      if (!isLatest()) return;
      setSecrets(listed);
      setFolders(children);
      setExtras(more);
    } catch (failure) {
      if (!isLatest()) return;
      setSecrets([]);
      setMessage({ text: (failure as Error).message, error: true });
    }
  }, [placeKey]);
  useEffect(() => {
    setSecrets(undefined);
    void load();
  }, [load]);

  const run = useCallback(
    async (what: () => Promise<unknown>, done: string) => {
      try {
        const answer = (await what()) as { approval?: unknown } | undefined;
        // a place an approval policy protects turns the write into a change request: nothing changed yet
        setMessage({ text: answer?.approval ? `${PROPOSED} (${done.toLowerCase()} once approved and merged)` : done });
        await load();
        return true;
      } catch (failure) {
        setMessage({ text: (failure as Error).message, error: true });
        return false;
      }
    },
    [load],
  );

  // the table follows the filter at a lower priority than the keystrokes, so typing stays responsive over 1,000 rows
  const deferredFilter = useDeferredValue(filter);
  const shown = useMemo(() => {
    const needle = deferredFilter.trim().toLowerCase();
    return needle ? (secrets ?? []).filter((secret) => secret.secretKey.toLowerCase().includes(needle)) : (secrets ?? []);
  }, [secrets, deferredFilter]);

  const crumbs = place.secretPath.split('/').filter(Boolean);

  return (
    <section aria-labelledby="secrets-title">
      <h1 id="secrets-title">{project.name}: secrets</h1>
      <div role="group" aria-label="Environment" className="tabs">
        {project.environments.map((environment) => (
          <button
            key={environment.slug}
            type="button"
            aria-pressed={environment.slug === place.environment}
            onClick={() => go(project, { environment: environment.slug, secretPath: place.secretPath })}
          >
            {environment.name}
          </button>
        ))}
      </div>
      <nav aria-label="Folder" className="crumbs">
        <button type="button" className="link" onClick={() => go(project, { ...place, secretPath: '/' })}>
          /
        </button>
        {crumbs.map((name, index) => (
          <span key={index}>
            <button type="button" className="link" onClick={() => go(project, { ...place, secretPath: '/' + crumbs.slice(0, index + 1).join('/') })}>
              {name}
            </button>
            /
          </span>
        ))}
      </nav>
      <button type="button" className="link" onClick={() => navigate(whereHref(place))}>
        Where {place.environment}:{place.secretPath} goes
      </button>
      {folders.length > 0 && (
        <ul className="folders" aria-label="Folders">
          {folders.map((folder) => (
            <li key={folder.id}>
              <button type="button" className="link" onClick={() => go(project, { ...place, secretPath: childPath(place.secretPath, folder.name) })}>
                {folder.name}/
              </button>
            </li>
          ))}
        </ul>
      )}
      {message && (
        <p role={message.error ? 'alert' : 'status'} className={message.error ? 'error' : 'notice'}>
          {message.text}
        </p>
      )}
      <label className="filter">
        Filter by key
        <input type="search" value={filter} onChange={(event) => setFilter(event.target.value)} />
      </label>
      {secrets === undefined ? (
        <p>Loading…</p>
      ) : secrets.length === 0 ? (
        <p className="empty">No secrets here yet. Add one below, or paste the contents of a .env file.</p>
      ) : (
        <table className="secrets">
          <caption className="sr-only">
            Secrets in {place.environment} at {place.secretPath}
          </caption>
          <thead>
            <tr>
              <th scope="col">Key</th>
              <th scope="col">Value</th>
              <th scope="col">Comment</th>
              <th scope="col">Tags</th>
              <th scope="col">Actions</th>
            </tr>
          </thead>
          <tbody>
            {shown.map((secret) => (
              <SecretLine key={secret.id} place={place} secret={secret} run={run} extras={extras} />
            ))}
          </tbody>
        </table>
      )}
      <Imported groups={extras.imports} />
      <AddSecret place={place} run={run} />
      <BulkPaste place={place} run={run} />
      <AddFolder place={place} run={run} />
    </section>
  );
}

type Run = (what: () => Promise<unknown>, done: string) => Promise<boolean>;
const PROPOSED = 'An approval policy protects this folder: your change is a change request waiting for its approvers';

const NO_EXTRAS: FolderExtras = { personalKeys: new Set(), imports: [], tags: [] };

const SecretLine = memo(function SecretLine({ place, secret, run, extras }: { place: Place; secret: SecretRow; run: Run; extras: FolderExtras }) {
  const [value, setValue] = useState<string>();
  const [mode, setMode] = useState<'view' | 'edit' | 'history' | 'personal'>('view');
  const hasPersonal = extras.personalKeys.has(secret.secretKey);
  const [error, setError] = useState<string>();

  async function reveal() {
    try {
      setValue(await secretsApi.reveal(place, secret.secretKey));
    } catch (failure) {
      setError((failure as Error).message);
    }
  }

  async function save(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const newKey = field(form, 'key').trim();
    const newValue = field(form, 'value');
    const change = {
      newSecretName: newKey && newKey !== secret.secretKey ? newKey : undefined,
      secretValue: newValue === '' ? undefined : newValue,
      secretComment: field(form, 'comment'),
    };
    const saved = await run(
      async () => secretsApi.update(place, secret.secretKey, { ...change, tagIds: await chosenTagIds(form, place.projectId) }),
      `Saved ${newKey || secret.secretKey}`,
    );
    if (saved) setMode('view');
  }

  if (mode === 'edit') {
    return (
      <tr>
        <td colSpan={5}>
          <form onSubmit={save} className="inline" aria-label={`Edit ${secret.secretKey}`}>
            <label>
              Key
              <input name="key" defaultValue={secret.secretKey} required />
            </label>
            <label>
              New value (empty keeps it)
              <textarea name="value" rows={1} />
            </label>
            <label>
              Comment
              <input name="comment" defaultValue={secret.secretComment} />
            </label>
            <TagPicker tags={extras.tags} chosen={secret.tags} />
            <button type="submit">Save</button>
            <button type="button" onClick={() => setMode('view')}>
              Cancel
            </button>
          </form>
        </td>
      </tr>
    );
  }

  return (
    <>
      <tr>
        <th scope="row" className="key">
          {secret.secretKey}
        </th>
        <td className="value">
          {value === undefined ? <span aria-label="hidden value">{MASK}</span> : <code className="revealed">{value}</code>}
          {value !== undefined && <References value={value} place={place} />}
          {error && <span role="alert">{error}</span>}
        </td>
        <td>
          {secret.secretComment}
          {hasPersonal && <span className="badge">personal value set</span>}
        </td>
        <td>{secret.tags?.map((tag) => tag.slug).join(', ')}</td>
        <td className="actions">
          {value === undefined ? (
            <button type="button" onClick={() => void reveal()} aria-label={`Reveal ${secret.secretKey}`}>
              Reveal
            </button>
          ) : (
            <button type="button" onClick={() => setValue(undefined)} aria-label={`Hide ${secret.secretKey}`}>
              Hide
            </button>
          )}
          <button type="button" onClick={() => setMode('edit')} aria-label={`Edit ${secret.secretKey}`}>
            Edit
          </button>
          <button type="button" onClick={() => setMode(mode === 'history' ? 'view' : 'history')} aria-label={`History of ${secret.secretKey}`}>
            History
          </button>
          <button type="button" onClick={() => setMode(mode === 'personal' ? 'view' : 'personal')} aria-label={`Personal value of ${secret.secretKey}`}>
            Personal
          </button>
          <button type="button" onClick={() => navigate(whereHref(place, secret.secretKey))} aria-label={`Where ${secret.secretKey} goes`}>
            Where
          </button>
          <button
            type="button"
            onClick={() => confirm(`Delete ${secret.secretKey}?`) && void run(() => secretsApi.remove(place, secret.secretKey), `Deleted ${secret.secretKey}`)}
            aria-label={`Delete ${secret.secretKey}`}
          >
            Delete
          </button>
        </td>
      </tr>
      {mode === 'personal' && (
        <tr>
          <td colSpan={5}>
            <PersonalOverride place={place} secret={secret} exists={hasPersonal} run={run} />
          </td>
        </tr>
      )}
      {mode === 'history' && (
        <tr>
          <td colSpan={5}>
            <History place={place} secret={secret} run={run} />
          </td>
        </tr>
      )}
    </>
  );
});

function AddSecret({ place, run }: { place: Place; run: Run }) {
  async function add(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const form = event.currentTarget;
    const data = new FormData(form);
    const key = field(data, 'key').trim();
    const created = await run(() => secretsApi.create(place, key, field(data, 'value'), field(data, 'comment')), `Added ${key}`);
    if (created) form.reset();
  }
  return (
    <form onSubmit={add} className="inline" aria-label="Add a secret">
      <h2>Add a secret</h2>
      <label>
        Key
        <input name="key" required pattern="[A-Za-z0-9_.\-]+" />
      </label>
      <label>
        Value
        <textarea name="value" rows={1} />
      </label>
      <label>
        Comment
        <input name="comment" />
      </label>
      <button type="submit">Add secret</button>
    </form>
  );
}

function BulkPaste({ place, run }: { place: Place; run: Run }) {
  async function paste(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const form = event.currentTarget;
    const pairs = parseEnvText(field(new FormData(form), 'env'));
    if (pairs.length === 0) return;
    if (await run(() => secretsApi.createMany(place, pairs), `Added ${pairs.length} secrets`)) form.reset();
  }
  return (
    <form onSubmit={paste} aria-label="Paste a .env file">
      <h2>Paste a .env file</h2>
      <label>
        .env text (KEY=value lines)
        <textarea name="env" rows={4} />
      </label>
      <button type="submit">Add all</button>
    </form>
  );
}

function AddFolder({ place, run }: { place: Place; run: Run }) {
  async function add(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const form = event.currentTarget;
    const name = field(new FormData(form), 'folder').trim();
    if (await run(() => secretsApi.createFolder(place, name), `Created folder ${name}`)) form.reset();
  }
  return (
    <form onSubmit={add} className="inline" aria-label="Add a folder">
      <label>
        New folder
        <input name="folder" required />
      </label>
      <button type="submit">Create folder</button>
    </form>
  );
}
