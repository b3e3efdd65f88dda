import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** Where `npm run build` writes the console (vite, console/vite.config.ts): dist/console, from src/http/console or dist/http/console. */
export const CONSOLE_BUILD_DIR = fileURLToPath(new URL('../../../dist/console/', import.meta.url));

/**
 * The console's Content-Security-Policy: its own scripts and styles only (no inline script or style, no eval),
 * calls to its own origin, never framed.
 */
export const CONSOLE_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json; charset=utf-8',
  '.txt': 'text/plain; charset=utf-8',
  '.woff2': 'font/woff2',
};

export interface ConsoleFile {
  body: Buffer;
  contentType: string;
  /** Hashed names (vite's assets/) never change content: cached for a year; the rest is revalidated. */
  cacheControl: string;
}

/** The console's files by URL path ('/index.html', '/assets/index-1a2b.js'), read once. */
export type ConsoleFiles = ReadonlyMap<string, ConsoleFile>;

/** The built console, or undefined when there is none (a build without it, or the tests' in-process servers). */
export async function loadConsoleFiles(dir = CONSOLE_BUILD_DIR): Promise<ConsoleFiles | undefined> {
  const names = await readdir(dir, { recursive: true, withFileTypes: true }).catch(() => undefined);
  if (!names) return undefined;
  const files = new Map<string, ConsoleFile>();
  for (const entry of names) {
    if (!entry.isFile()) continue;
    const full = path.join(entry.parentPath, entry.name);
    const urlPath = '/' + path.relative(dir, full).split(path.sep).join('/');
    const contentType = CONTENT_TYPES[path.extname(entry.name)] ?? 'application/octet-stream';
    const cacheControl = urlPath.startsWith('/assets/') ? 'public, max-age=31536000, immutable' : 'no-cache';
    files.set(urlPath, { body: await readFile(full), contentType, cacheControl });
  }
  return files.has('/index.html') ? files : undefined;
}
