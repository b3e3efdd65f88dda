import type { RE2JS } from 're2js';
import { compileNameGlob, compileRegex } from '../../../patterns/patterns.ts';
import type { KeySelection } from '../../resources.ts';
import { NotReadyError } from '../context.ts';

/** One secret as a source offers it: its name, value and tag slugs. */
export interface OfferedSecret {
  key: string;
  value: string;
  tags: readonly string[];
}

/** A compiled KeySelection: which secrets go on, and the name each goes on under ('' leaves it out). */
export interface KeyFilter {
  /** The name `secret` goes on under, or undefined when the selection leaves it out. */
  nameOf(secret: OfferedSecret): string | undefined;
}

const EVERY_KEY: KeyFilter = { nameOf: (secret) => secret.key };

/**
 * Compiles a selection once per sync. Patterns and regular expressions come
 * from namespace users: they compile through patterns/ (RE2, linear time,
 * bounded). One that does not compile is a spec error (InvalidSpec), named
 * with where it is.
 */
export function compileKeySelection(selection: KeySelection | undefined, where: string): KeyFilter {
  if (!selection) return EVERY_KEY;
  const include = selection.include?.map((glob, index) => compile(() => compileNameGlob(glob), `${where}.include[${index}]`, glob));
  const exclude = (selection.exclude ?? []).map((glob, index) => compile(() => compileNameGlob(glob), `${where}.exclude[${index}]`, glob));
  const tags = selection.tags ? new Set(selection.tags) : undefined;
  const excludeTags = new Set(selection.excludeTags ?? []);
  const rename = compileRename(selection.rename, `${where}.rename`);
  return {
    nameOf(secret) {
      if (include && !include.some((pattern) => pattern.matches(secret.key))) return undefined;
      if (exclude.some((pattern) => pattern.matches(secret.key))) return undefined;
      if (tags && !secret.tags.some((tag) => tags.has(tag))) return undefined;
      if (secret.tags.some((tag) => excludeTags.has(tag))) return undefined;
      const renamed = rename(secret.key);
      return renamed === '' ? undefined : renamed;
    },
  };
}

type Rename = (key: string) => string;

/** stripPrefix, then each rewrite in order (every match replaced; `$1`, `${name}` insert groups), then addPrefix. */
function compileRename(rename: KeySelection['rename'], where: string): Rename {
  if (!rename) return (key) => key;
  const { stripPrefix, addPrefix } = rename;
  const rewrites = (rename.rewrite ?? []).map(({ regex, replacement }, index) => {
    const pattern = compile(() => compileRegex(regex), `${where}.rewrite[${index}].regex`, regex);
    checkReplacement(pattern, replacement, `${where}.rewrite[${index}].replacement`);
    return (key: string) => pattern.matcher(key).replaceAll(replacement, true);
  });
  return (key) => {
    let name = stripPrefix && key.startsWith(stripPrefix) ? key.slice(stripPrefix.length) : key;
    for (const rewrite of rewrites) name = rewrite(name);
    return addPrefix ? `${addPrefix}${name}` : name;
  };
}

/** A replacement naming a group the regex lacks fails at the first match: refused up front instead. */
function checkReplacement(pattern: RE2JS, replacement: string, where: string): void {
  const groups = pattern.groupCount();
  const named = pattern.namedGroups();
  for (const [, number, name] of replacement.matchAll(/(?<!\\)\$(?:(\d+)|\{([^}]*)\})/g)) {
    if (number !== undefined && Number(number[0]) > groups) throw invalid(where, `'$${number[0]}' names a group the regex does not have (it has ${groups})`);
    if (name !== undefined && !(name in named)) throw invalid(where, `'\${${name}}' names a group the regex does not have`);
  }
}

function compile<T>(build: () => T, where: string, source: string): T {
  try {
    return build();
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw invalid(where, `'${source}' is not a valid pattern: ${reason}`);
  }
}

function invalid(where: string, message: string): NotReadyError {
  return new NotReadyError('InvalidSpec', `spec.${where}: ${message}`);
}
