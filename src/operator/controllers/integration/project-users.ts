import { ANNOTATION_INSTALLATION, type IntegrationResource, type SecretsProject } from '../../resources.ts';
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
  /** Per SecretsProject ("<namespace>/<name>"), what its users resolved it by at its last event. */
  readonly #resolvedBy = new Map<string, string>();

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

  /**
   * The users of a SecretsProject whose add or update event changed what they resolve it by (resolveProject):
   * its uid, generation (spec), deletion, the installation that claims it, the slug its status names and its
   * Ready condition. Its own claim and status writes that change none of these (three per project as a fleet
   * starts) wake nobody: every one used to sync all its users again, those already synced included.
   */
  changedFor(project: SecretsProject): IntegrationResource[] {
    const id = formatNamespacedName(project.metadata);
    const resolvedBy = resolutionOf(project);
    if (this.#resolvedBy.get(id) === resolvedBy) return [];
    this.#resolvedBy.set(id, resolvedBy);
    return this.of(project);
  }

  /** The users of a SecretsProject that is gone. */
  goneFor(project: SecretsProject): IntegrationResource[] {
    this.#resolvedBy.delete(formatNamespacedName(project.metadata));
    return this.of(project);
  }

  of(project: SecretsProject): IntegrationResource[] {
    const { namespace } = project.metadata;
    const users = this.#informer.list(namespace).filter((resource) => usesProject(project, resource));
    for (const resource of this.#bySlug.values()) if (resource.metadata.namespace !== namespace && usesProject(project, resource)) users.push(resource);
    return users;
  }
}

function resolutionOf(project: SecretsProject): string {
  const { uid, generation, deletionTimestamp } = project.metadata;
  const ready = project.status?.conditions?.find((condition) => condition.type === 'Ready');
  const claimedBy = project.metadata.annotations?.[ANNOTATION_INSTALLATION] ?? null;
  return JSON.stringify([uid, generation, deletionTimestamp ?? null, claimedBy, project.status?.slug ?? null, ready?.status ?? null, ready?.reason ?? null]);
}
