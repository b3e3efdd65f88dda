import type { SecretListing } from '../../port/coffer-port.ts';
import type { IntegrationResource, KeyCollision } from '../../resources.ts';
import { NotReadyError } from '../context.ts';
import type { PlannedSource } from './integration-sources.ts';
import { describeTarget, withDataKeysOnly } from './managed-target.ts';
import { mergeSources } from './source-merge.ts';
import type { TemplateRenderer } from './template/template-renderer.ts';

/** What the target holds, and what did not make it as it was. */
export interface TargetData {
  data: Record<string, string>;
  /** Names that cannot be data keys, left out (sorted). */
  skipped: string[];
  /** Names more than one place gave different values for. */
  collisions: KeyCollision[];
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
  const { values, collisions } = mergeSources(sources.map(({ source, filter }, index) => ({ environment: source.environment, listing: listings[index]!, filter })));
  const selected = Object.fromEntries(values);
  const rendered = await render(resource, selected, renderer);
  return { ...withDataKeysOnly(rendered), collisions };
}

async function render(resource: IntegrationResource, selected: Record<string, string>, renderer: TemplateRenderer): Promise<Record<string, string>> {
  const template = resource.spec.target.template;
  if (!template?.data || Object.keys(template.data).length === 0) return selected;
  const answer = await renderer.render(resource.metadata.namespace, template.data, selected);
  if (!answer.ok) {
    // names the template (the field), its data key and the position; answer.message never holds a value (liquid-engine.ts)
    const what = answer.key ? `the template spec.target.template.data['${answer.key}'] (data key '${answer.key}')` : 'the templates of spec.target.template.data';
    throw new NotReadyError('TemplateError', `${what} failed: ${answer.message}. Nothing was written: ${describeTarget(resource)} keeps its last data`);
  }
  return template.mergePolicy === 'Merge' ? { ...selected, ...answer.data } : answer.data;
}
