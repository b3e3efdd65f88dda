import { normalizeSecretPath } from '../../../folders/secret-path.ts';
import type { SecretSource } from '../../port/coffer-port.ts';
import type { IntegrationResource } from '../../resources.ts';
import { compileKeySelection, type KeyFilter } from './key-selection.ts';

/** One place an Integration reads, with its compiled key selection. */
export interface PlannedSource {
  source: SecretSource;
  filter: KeyFilter;
  /** Where in the spec it is declared ("spec" for the primary source, "spec.sources[1]"), for messages. */
  declaredAt: string;
}

/**
 * The places an Integration reads, in precedence order (the primary source
 * first, then spec.sources in order: a later one wins). Key selections are
 * compiled here, before anything is read: a pattern that does not compile is
 * an InvalidSpec failure.
 */
export function sourcesOf(resource: IntegrationResource, projectId: string): PlannedSource[] {
  const { spec } = resource;
  const primary = {
    source: sourceAt(projectId, spec),
    filter: compileKeySelection(spec.keys, 'keys'),
    declaredAt: 'spec',
  };
  const others = (spec.sources ?? []).map((declared, index) => ({
    source: sourceAt(projectId, declared),
    filter: compileKeySelection(declared.keys, `sources[${index}].keys`),
    declaredAt: `spec.sources[${index}]`,
  }));
  return [primary, ...others];
}

function sourceAt(projectId: string, place: { environment: string; secretPath?: string; recursive?: boolean; includeImports?: boolean }): SecretSource {
  return {
    projectId,
    environment: place.environment,
    path: normalizeSecretPath(place.secretPath ?? '/'),
    recursive: place.recursive ?? false,
    includeImports: place.includeImports ?? true,
  };
}

/** What the listings are kept by: every field of a source, in a fixed order, joined by NUL (which no slug or path holds). */
export function listingKeyOf({ projectId, environment, path, recursive, includeImports }: SecretSource): string {
  return [projectId, environment, path, recursive ? 'recursive' : 'one-folder', includeImports ? 'imports' : 'no-imports'].join('\u0000');
}
