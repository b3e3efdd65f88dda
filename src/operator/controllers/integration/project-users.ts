import type { IntegrationResource, SecretsProject } from '../../resources.ts';
import type { CachedInformer } from '../../runtime/informers.ts';
import { formatNamespacedName } from '../../runtime/object-key.ts';
import { usesProject } from '../project-resolution.ts';

/**
 * The Integrations that use a SecretsProject: those of its namespace that name it (projectRef), and those of any
 * namespace that name its project by slug. Asked at every event of every SecretsProject: the Integrations that
 * name a slug (usually few) are kept apart, so that a fleet's SecretsProject events, three per project as a fleet
 * starts, look through one namespace each instead of every Integration (30 million checks at 10,000 Integrations
 * in 1,000 projects).
 */
export class ProjectUsers {
  readonly #informer: CachedInformer<IntegrationResource>;
  /** The Integrations naming a project by slug, by "<namespace>/<name>". */
  readonly #bySlug = new Map<string, IntegrationResource>();

  /** Call before the informer starts (its initial list arrives as add events). */
  constructor(informer: CachedInformer<IntegrationResource>) {
    this.#informer = informer;
    const note = (resource: IntegrationResource) => {
      const id = formatNamespacedName(resource.metadata);
      if (resource.spec.projectSlug !== undefined) this.#bySlug.set(id, resource);
      else this.#bySlug.delete(id);
    };
    informer.on('add', note);
    informer.on('update', note);
    informer.on('delete', (resource) => this.#bySlug.delete(formatNamespacedName(resource.metadata)));
  }

  of(project: SecretsProject): IntegrationResource[] {
    const { namespace } = project.metadata;
    const users = this.#informer.list(namespace).filter((resource) => usesProject(project, resource));
    for (const resource of this.#bySlug.values()) if (resource.metadata.namespace !== namespace && usesProject(project, resource)) users.push(resource);
    return users;
  }
}
