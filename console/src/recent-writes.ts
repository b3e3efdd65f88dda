/**
 * The writes this page made, by the revision each committed (its Coffer-Revision header) and the place it named:
 * the "Where it goes" screen follows those of its folder to every cluster (the revision barrier). Kept for the page's
 * life, the last few only.
 */
export interface Write {
  revision: number;
  projectId: string;
  environment: string;
  secretPath: string;
  /** The secret's key, for a write of one secret. */
  key?: string;
}

const KEPT = 20;
const writes: Write[] = [];

function field(body: unknown, ...names: string[]): string | undefined {
  if (typeof body !== 'object' || body === null) return undefined;
  for (const name of names) {
    const value = (body as Record<string, unknown>)[name];
    if (typeof value === 'string') return value;
  }
  return undefined;
}

/** Called by the API client after every successful request. */
export function noteWrite(method: string, path: string, body: unknown, response: Response): void {
  const revision = Number(response.headers.get('coffer-revision'));
  const projectId = field(body, 'projectId', 'workspaceId');
  const environment = field(body, 'environment');
  if (method === 'GET' || !Number.isSafeInteger(revision) || revision <= 0 || !projectId || !environment) return;
  const key = /^\/api\/v4\/secrets\/([^/?]+)$/.exec(path)?.[1];
  writes.push({ revision, projectId, environment, secretPath: field(body, 'secretPath', 'path') ?? '/', key: key && decodeURIComponent(key) });
  writes.splice(0, Math.max(0, writes.length - KEPT));
}

/** The page's writes at one folder, oldest first. */
export function writesAt(place: { projectId: string; environment: string; secretPath: string }): Write[] {
  return writes.filter((write) => write.projectId === place.projectId && write.environment === place.environment && write.secretPath === place.secretPath);
}
