import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export interface GeneratedKeys {
  encryptionKey: string;
  authSecret: string;
  /** True when this call created the file. */
  created: boolean;
  path: string;
}

/** The generated keys file cannot be used; nothing encrypted with its keys can be read without them. */
export class KeysFileError extends Error {}

const RESTORE = '; restore it from a backup, or set COFFER_ENCRYPTION_KEY and COFFER_AUTH_SECRET to the keys it held';

function readKeysFile(path: string): { encryptionKey?: string; authSecret?: string } {
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as { encryptionKey?: string; authSecret?: string };
  } catch (error) {
    throw new KeysFileError(`cannot read the generated keys in ${path} (${error instanceof Error ? error.message : String(error)})${RESTORE}`);
  }
}

/**
 * Embedded mode without configured keys: generate them once into the data
 * directory (mode 0600) and reuse them on every later start.
 */
export function loadOrCreateKeysFile(dataDir: string): GeneratedKeys {
  const path = join(dataDir, 'keys.json');
  if (existsSync(path)) {
    const stored = readKeysFile(path);
    if (!stored.encryptionKey || !stored.authSecret) throw new KeysFileError(`${path} is incomplete (it needs encryptionKey and authSecret)${RESTORE}`);
    return { encryptionKey: stored.encryptionKey, authSecret: stored.authSecret, created: false, path };
  }
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const keys = { encryptionKey: randomBytes(32).toString('base64'), authSecret: randomBytes(48).toString('base64') };
  writeFileSync(path, `${JSON.stringify(keys, null, 2)}\n`, { mode: 0o600, flag: 'wx' });
  return { ...keys, created: true, path };
}

/** After `coffer rotate-key` on a database whose root key lives in keys.json: the new key replaces it there. */
export function replaceStoredEncryptionKey(dataDir: string, encryptionKey: string): string {
  const path = join(dataDir, 'keys.json');
  const stored = JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>;
  const temporary = `${path}.rotating`;
  writeFileSync(temporary, `${JSON.stringify({ ...stored, encryptionKey }, null, 2)}\n`, { mode: 0o600 });
  renameSync(temporary, path);
  return path;
}
