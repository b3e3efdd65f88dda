import { BadRequestError } from '../errors.ts';

export const FOLDER_NAME_PATTERN = /^[A-Za-z0-9_-]+$/;
export const FOLDER_NAME_MAX = 128;
export const ROOT_FOLDER_NAME = 'root';

export function isValidFolderName(name: string): boolean {
  return name.length <= FOLDER_NAME_MAX && FOLDER_NAME_PATTERN.test(name);
}

/**
 * Splits a secret path into folder names: a leading "/" is implied, empty
 * segments (trailing or doubled slashes) are dropped, and every name must be
 * letters, digits, "_" or "-".
 */
export function parseSecretPath(path: string): string[] {
  const segments = path.trim().split('/').filter((segment) => segment.length > 0);
  for (const segment of segments) {
    if (!isValidFolderName(segment)) {
      throw new BadRequestError(
        `Invalid folder name '${segment}' in path '${path}': use letters, digits, '_' and '-' (at most ${FOLDER_NAME_MAX} characters)`,
        'InvalidPath',
      );
    }
  }
  return segments;
}

export function formatSecretPath(segments: readonly string[]): string {
  return `/${segments.join('/')}`;
}

export function normalizeSecretPath(path: string): string {
  return formatSecretPath(parseSecretPath(path));
}
