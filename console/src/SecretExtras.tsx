import { type FormEvent, useState } from 'react';
import { api, type Place, type SecretRow } from './api.ts';
import { field } from './form-field.ts';
import { describeFailure } from './resource.tsx';

/** What a folder shows besides its own secrets: the caller's personal overrides, imported secrets, the project's tags. */
export interface Tag {
  id: string;
  slug: string;
}
export interface ImportedGroup {
  environment: string;
  secretPath: string;
  secrets: { secretKey: string }[];
}
export interface FolderExtras {
  personalKeys: Set<string>;
  imports: ImportedGroup[];
  tags: Tag[];
}

type Run = (what: () => Promise<unknown>, done: string) => Promise<boolean>;
const personal = (place: Place) => ({ ...place, type: 'personal' });
const secretUrl = (key: string) => `/api/v4/secrets/${encodeURIComponent(key)}`;

/** Masked listings only: no value is in any of these answers. */
export async function loadFolderExtras(place: Place): Promise<FolderExtras> {
  const [withOverrides, withImports, tags] = await Promise.all([
    api<{ secrets: SecretRow[] }>('GET', '/api/v4/secrets', { query: { ...place, viewSecretValue: false, includeImports: false, includePersonalOverrides: true } }),
    api<{ imports?: ImportedGroup[] }>('GET', '/api/v4/secrets', { query: { ...place, viewSecretValue: false, includeImports: true, expandSecretReferences: false } }),
    api<{ workspaceTags: Tag[] }>('GET', `/api/v1/workspace/${encodeURIComponent(place.projectId)}/tags`).then(
      (answer) => answer.workspaceTags,
      () => [], // a caller who may not read tags still sees the secrets
    ),
  ]);
  const personalKeys = new Set(withOverrides.secrets.filter((secret) => secret.type === 'personal').map((secret) => secret.secretKey));
  return { personalKeys, imports: withImports.imports ?? [], tags };
}

/** The API asks every tag for a color; one made from the edit form gets a neutral grey. */
const NEW_TAG_COLOR = '#808080';
export const tagsApi = {
  create: (projectId: string, slug: string) =>
    api<{ workspaceTag: Tag }>('POST', `/api/v1/workspace/${encodeURIComponent(projectId)}/tags`, { body: { slug, color: NEW_TAG_COLOR } }).then(
      (answer) => answer.workspaceTag,
    ),
};

/** Where each `${…}` of a revealed value reads from: the same folder, or another environment and path. */
export function References({ value, place }: { value: string; place: Place }) {
  const references = [...value.matchAll(REFERENCE)].map((match) => {
    const parts = match[1]!.split('.');
    if (parts.length === 1) return { text: match[0], key: parts[0]!, from: `${place.environment}:${place.secretPath}` };
    return { text: match[0], key: parts.at(-1)!, from: `${parts[0]}:/${parts.slice(1, -1).join('/')}` };
  });
  if (references.length === 0) return null;
  return (
    <ul className="references" aria-label="References">
      {references.map((reference, index) => (
        <li key={index}>
          <code>{reference.text}</code> reads {reference.key} from {reference.from}
        </li>
      ))}
    </ul>
  );
}
const REFERENCE = /\$\{([^{}\s]+)\}/g;

/** The tags of a secret as checkboxes, and a new tag to make and add. */
export function TagPicker({ tags, chosen }: { tags: Tag[]; chosen: SecretRow['tags'] }) {
  return (
    <fieldset className="tags">
      <legend>Tags</legend>
      {tags.map((tag) => (
        <label key={tag.id} className="check">
          <input type="checkbox" name="tag" value={tag.id} defaultChecked={chosen?.some((held) => held.id === tag.id)} />
          {tag.slug}
        </label>
      ))}
      <label>
        New tag
        <input name="newTag" pattern="[a-z0-9][a-z0-9\-_]*" />
      </label>
    </fieldset>
  );
}

/** The tag ids a submitted edit form chose, the new tag made first. */
export async function chosenTagIds(form: FormData, projectId: string): Promise<string[]> {
  const ids = form.getAll('tag').filter((value): value is string => typeof value === 'string');
  const newTag = field(form, 'newTag').trim();
  if (newTag) ids.push((await tagsApi.create(projectId, newTag)).id);
  return ids;
}

/** The signed-in user's own value for a key, in place of the shared one for them only. */
export function PersonalOverride({ place, secret, exists, run }: { place: Place; secret: SecretRow; exists: boolean; run: Run }) {
  const [value, setValue] = useState<string>();
  const [error, setError] = useState<string>();
  const key = secret.secretKey;

  async function save(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const form = event.currentTarget;
    const secretValue = field(new FormData(form), 'personalValue');
    const write = exists
      ? () => api('PATCH', secretUrl(key), { body: { ...personal(place), secretValue } })
      : () => api('POST', secretUrl(key), { body: { ...personal(place), secretValue } });
    if (await run(write, `Saved your personal value of ${key}`)) form.reset();
  }

  async function reveal() {
    try {
      const answer = await api<{ secret: SecretRow }>('GET', secretUrl(key), {
        query: { ...personal(place), viewSecretValue: true, expandSecretReferences: false, includeImports: false },
      });
      setValue(answer.secret.secretValue);
    } catch (failure) {
      setError(describeFailure(failure));
    }
  }

  return (
    <div role="region" aria-label={`Personal value of ${key}`} className="personal">
      <p>
        {exists
          ? `You have a personal value of ${key}: reads made as you get it instead of the shared one.`
          : `No personal value of ${key}: set one to use your own value without changing the shared one.`}
      </p>
      {value !== undefined && <code className="revealed">{value}</code>}
      {error && <p role="alert">{error}</p>}
      <form onSubmit={save} className="inline" aria-label={`Set your personal value of ${key}`}>
        <label>
          Personal value
          <textarea name="personalValue" rows={1} required />
        </label>
        <button type="submit">{exists ? 'Change personal value' : 'Set personal value'}</button>
        {exists && (
          <>
            <button type="button" onClick={() => void reveal()}>
              Reveal personal value
            </button>
            <button type="button" onClick={() => void run(() => api('DELETE', secretUrl(key), { body: personal(place) }), `Deleted your personal value of ${key}`)}>
              Delete personal value
            </button>
          </>
        )}
      </form>
    </div>
  );
}

/** The secrets this folder imports, with where each comes from (their values stay where they are). */
export function Imported({ groups }: { groups: ImportedGroup[] }) {
  const rows = groups.flatMap((group) => group.secrets.map((secret) => ({ key: secret.secretKey, from: `${group.environment}:${group.secretPath}` })));
  if (rows.length === 0) return null;
  return (
    <>
      <h2>Imported here</h2>
      <table>
        <caption className="sr-only">Secrets imported into this folder</caption>
        <thead>
          <tr>
            <th scope="col">Key</th>
            <th scope="col">Comes from</th>
          </tr>
        </thead>
        <tbody>
          {rows.map((row) => (
            <tr key={`${row.from}\u0000${row.key}`}>
              <th scope="row" className="key">
                {row.key}
              </th>
              <td>{row.from}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </>
  );
}
