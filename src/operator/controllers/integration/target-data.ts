import type { SecretListing } from '../../port/coffer-port.ts';
import type { IntegrationResource, KeyCollision } from '../../resources.ts';
import { NotReadyError } from '../context.ts';
import type { PlannedSource } from './integration-sources.ts';
import { describeTarget, withDataKeysOnly } from './managed-target.ts';
import { type KeyOrigin, mergeSources } from './source-merge.ts';
import type { TemplateRenderer } from './template/template-renderer.ts';

/** What the target holds, and what did not make it as it was. */
export interface TargetData {
  data: Record<string, string>;
  /** Names that cannot be data keys, left out (sorted). */
  skipped: string[];
  /** Names more than one place gave different values for. */
  collisions: KeyCollision[];
  /** Where each key of `data` came from; absent for those its template made. */
  origins: Map<string, KeyOrigin>;
}

/**
 * From what the sources listed to what the target holds: each source's keys
 * selected and renamed, the sources merged by precedence, the template
 * rendered over them (all or nothing: a template error writes nothing), and
 * names the apiserver would refuse left out.
 */
export async function targetDataOf(
  resource: IntegrationResource,
  sources: readonly PlannedSource[],
  listings: readonly SecretListing[],
  renderer: TemplateRenderer,
): Promise<TargetData> {
  const merged = mergeSources(sources.map(({ source, filter }, index) => ({ environment: source.environment, listing: listings[index]!, filter })));
  const selected = Object.fromEntries(merged.values);
  const { rendered, made } = await render(resource, selected, renderer);
  const { data, skipped } = withDataKeysOnly(rendered);
  const origins = new Map<string, KeyOrigin>();
  for (const key of Object.keys(data)) {
    const origin = made.has(key) ? undefined : merged.origins.get(key);
    if (origin) origins.set(key, origin);
  }
  return { data, skipped, collisions: merged.collisions, origins };
}

/** What the target holds before names that cannot be data keys are left out, and which of its keys the template made. */
async function render(
  resource: IntegrationResource,
  selected: Record<string, string>,
  renderer: TemplateRenderer,
): Promise<{ rendered: Record<string, string>; made: Set<string> }> {
  const template = resource.spec.target.template;
  if (!template?.data || Object.keys(template.data).length === 0) return { rendered: selected, made: new Set() };
  const answer = await renderer.render(resource.metadata.namespace, template.data, selected);
  if (!answer.ok) {
    // names the template (the field), its data key and the position; answer.message never holds a value (liquid-engine.ts)
    const what = answer.key ? `the template spec.target.template.data['${answer.key}'] (data key '${answer.key}')` : 'the templates of spec.target.template.data';
    throw new NotReadyError('TemplateError', `${what} failed: ${answer.message}. Nothing was written: ${describeTarget(resource)} keeps its last data`);
  }
  const made = new Set(Object.keys(answer.data));
  return { rendered: template.mergePolicy === 'Merge' ? { ...selected, ...answer.data } : answer.data, made };
}
