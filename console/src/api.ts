import { noteWrite } from './recent-writes.ts';

/**
 * The console's only way to the API: same origin, the session cookie (HttpOnly, never seen here) and the
 * header that proves the request comes from the console's own page (docs/threat-model.md, "The web console").
 */
export class ApiError extends Error {
  readonly status: number;
  readonly code: string;
  constructor(status: number, code: string, message: string) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

type Query = Record<string, string | number | boolean | undefined>;

let onSignedOut: () => void = () => undefined;

/** What happens when the API answers 401: the session ended (expired, revoked or signed out elsewhere). */
export function whenSignedOut(handler: () => void): void {
  onSignedOut = handler;
}

function withQuery(path: string, query?: Query): string {
  if (!query) return path;
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) if (value !== undefined) params.set(key, String(value));
  const text = params.toString();
  return text ? `${path}?${text}` : path;
}

export async function api<T>(method: string, path: string, options: { query?: Query; body?: unknown } = {}): Promise<T> {
  const headers: Record<string, string> = { 'x-coffer-console': '1' };
  if (options.body !== undefined) headers['content-type'] = 'application/json';
  const response = await fetch(withQuery(path, options.query), {
    method,
    headers,
    credentials: 'same-origin',
    body: options.body === undefined ? undefined : JSON.stringify(options.body),
  });
  const body = (await response.json().catch(() => ({}))) as Record<string, unknown>;
  if (!response.ok) {
    if (response.status === 401 && !path.endsWith('/console/session')) onSignedOut();
    const message = typeof body.message === 'string' ? body.message : `The server answered ${response.status}`;
    throw new ApiError(response.status, typeof body.code === 'string' ? body.code : 'Error', message);
  }
  noteWrite(method, path, options.body, response);
  return body as T;
}

export interface Session {
  user: { id: string; email: string };
  organizationId: string;
  organizations: { id: string; name: string; slug: string }[];
}

export interface Project {
  id: string;
  name: string;
  slug: string;
  environments: { id: string; name: string; slug: string }[];
}

export interface SecretRow {
  id: string;
  secretKey: string;
  secretValue: string;
  secretComment: string;
  version: number;
  type: string;
  secretPath?: string;
  tags?: { id: string; slug: string; name: string }[];
}

export interface Folder {
  id: string;
  name: string;
}

export interface AuditEntry {
  id: string;
  createdAt: string;
  userAgentType: string | null;
  ipAddress: string | null;
  event: { type: string; metadata: unknown };
  actor: { type: string; metadata: unknown };
}

export interface Place {
  projectId: string;
  environment: string;
  secretPath: string;
}

export const secretsApi = {
  /** Values masked by the server: none is in the answer. */
  list: (place: Place) =>
    api<{ secrets: SecretRow[] }>('GET', '/api/v4/secrets', { query: { ...place, viewSecretValue: false, includeImports: false } }).then((r) =>
      r.secrets.filter((secret) => secret.type === 'shared'),
    ),
  /** One value, shown on purpose: audited as `reveal-secret`. */
  reveal: (place: Place, key: string, version?: number) =>
    api<{ secret: SecretRow }>('GET', `/api/v4/secrets/${encodeURIComponent(key)}`, {
      query: { ...place, viewSecretValue: true, expandSecretReferences: false, includeImports: false, version },
    }).then((r) => r.secret.secretValue),
  create: (place: Place, key: string, value: string, comment: string) =>
    api('POST', `/api/v4/secrets/${encodeURIComponent(key)}`, { body: { ...place, secretValue: value, secretComment: comment } }),
  update: (place: Place, key: string, change: { secretValue?: string; secretComment?: string; newSecretName?: string; tagIds?: string[] }) =>
    api('PATCH', `/api/v4/secrets/${encodeURIComponent(key)}`, { body: { ...place, ...change } }),
  remove: (place: Place, key: string) => api('DELETE', `/api/v4/secrets/${encodeURIComponent(key)}`, { body: place }),
  createMany: (place: Place, secrets: { secretKey: string; secretValue: string }[]) => api('POST', '/api/v4/secrets/batch', { body: { ...place, secrets } }),
  folders: (place: Place) =>
    api<{ folders: Folder[] }>('GET', '/api/v1/folders', {
      query: { workspaceId: place.projectId, environment: place.environment, path: place.secretPath },
    }).then((r) => r.folders),
  createFolder: (place: Place, name: string) =>
    api('POST', '/api/v1/folders', { body: { workspaceId: place.projectId, environment: place.environment, path: place.secretPath, name } }),
};
