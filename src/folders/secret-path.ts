import { BadRequestError } from '../errors.ts';

export const FOLDER_NAME_PATTERN = /^[A-Za-z0-9_-]+$/;
export const FOLDER_NAME_MAX = 128;
export const ROOT_FOLDER_NAME = 'root';
/** Folders nest at most this deep; so a path has at most this many segments. */
export const MAX_PATH_DEPTH = 30;
/**
 * A path as sent is at most this long (the routes' input rules refuse longer
 * ones first, with the same bound). Any path of MAX_PATH_DEPTH names of
 * FOLDER_NAME_MAX characters (3,870 once normalised) fits, renames included;
 * the bound is on the text to parse, refused before it is split.
 */
export const MAX_PATH_LENGTH = 4096;

export function isValidFolderName(name: string): boolean {
  return name.length <= FOLDER_NAME_MAX && FOLDER_NAME_PATTERN.test(name);
}

/**
 * Splits a secret path into folder names: a leading "/" is implied, empty
 * segments (trailing or doubled slashes) are dropped, and every name must be
 * letters, digits, "_" or "-".
 */
export function parseSecretPath(path: string): string[] {
  if (path.length > MAX_PATH_LENGTH) {
    throw new BadRequestError(`The path is longer than ${MAX_PATH_LENGTH} characters`, 'InvalidPath');
  }
  const segments = path
    .trim()
    .split('/')
    .filter((segment) => segment.length > 0);
  assertPathDepth(segments);
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

/** Folders nest at most MAX_PATH_DEPTH deep. */
export function assertPathDepth(segments: readonly string[]): void {
  if (segments.length > MAX_PATH_DEPTH) {
    throw new BadRequestError(`The path is ${segments.length} folders deep; folders nest at most ${MAX_PATH_DEPTH} deep`, 'InvalidPath');
  }
}

export function formatSecretPath(segments: readonly string[]): string {
  return `/${segments.join('/')}`;
}

export function normalizeSecretPath(path: string): string {
  return formatSecretPath(parseSecretPath(path));
}
