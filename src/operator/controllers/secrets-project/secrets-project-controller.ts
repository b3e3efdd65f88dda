import type { Claimant, Project } from '../../port/coffer-port.ts';
import type { SecretsProject } from '../../resources.ts';
import { type Controller, done, type Failure, failed, type ReconcileResult, type Watches } from '../../runtime/controller.ts';
import type { CachedInformer } from '../../runtime/informers.ts';
import { keyOf } from '../../runtime/object-key.ts';
import type { ControllerContext } from '../context.ts';
import { asNotReady, ignoreCofferNotFound, isCofferNotFound } from '../failures.ts';
import { defaultProjectSlug } from './project-slug.ts';

/**
 * SecretsProject → a project, created or (with a namespace grant) claimed,
 * with its name, autoCapitalization and listed environments. Without a grant
 * for an existing project nothing about it is read, renamed or deleted.
 */
export class SecretsProjectController implements Controller<SecretsProject> {
  readonly kind = 'SecretsProject';
  readonly failureConditions = ['Ready'] as const;
  /** Integrations and imports wait for their SecretsProject's status. */
  readonly urgent = true;
  readonly informer: CachedInformer<SecretsProject>;
  readonly #context: ControllerContext;

  constructor(context: ControllerContext) {
    this.#context = context;
    this.informer = context.informers.projects;
  }

  /** A grant given or revoked may let any SecretsProject waiting for one go on; a deleted project concerns its declarer. */
  setup(watches: Watches): void {
    watches.changes((changes) => {
      const keys = [];
      for (const change of changes) {
        if (change.kind === 'access') keys.push(...this.informer.list());
        if (change.kind === 'project-deleted') keys.push(...this.informer.list().filter((project) => project.status?.projectId === change.projectId));
      }
      return keys.map((project) => keyOf('SecretsProject', project));
    });
  }

  async reconcile(resource: SecretsProject): Promise<ReconcileResult> {
    if (await this.#projectWasDeleted(resource)) return failed(projectDeleted(resource));
    const project = await this.#declareProject(resource);
    await this.#convergeSettings(resource, project);
    const environments = await this.#convergeEnvironments(resource, project.id);
    await this.#context.status.write('SecretsProject', resource, { projectId: project.id, slug: project.slug, environments }, [
      { type: 'Ready', status: 'True', reason: 'Reconciled', message: `project '${project.slug}' is in sync` },
    ]);
    return done();
  }

  /**
   * The project this SecretsProject declared is gone (deleted through the API)
   * and its spec does not ask for a new one: it is not silently recreated.
   */
  async #projectWasDeleted(resource: SecretsProject): Promise<boolean> {
    const projectId = resource.status?.projectId;
    if (!projectId || resource.spec.onProjectDeleted === 'Recreate') return false;
    try {
      await this.#context.port.projects.get(projectId);
      return false;
    } catch (error) {
      if (isCofferNotFound(error)) return true;
      throw error;
    }
  }

  /** The project this SecretsProject declares: created, or claimed with a grant. */
  async #declareProject(resource: SecretsProject): Promise<Project> {
    const slug = resource.spec.slug ?? defaultProjectSlug(resource.metadata.namespace, resource.metadata.name);
    try {
      return await this.#context.port.projects.declare(this.#claimantOf(resource), { slug, name: resource.spec.name });
    } catch (error) {
      throw asNotReady(error);
    }
  }

  #claimantOf(resource: SecretsProject): Claimant {
    const { namespace, name, uid } = resource.metadata;
    return { cluster: this.#context.identity.clusterName, namespace, name, uid: uid! };
  }

  async #convergeSettings(resource: SecretsProject, project: Project): Promise<void> {
    const changes: { name?: string; autoCapitalization?: boolean } = {};
    if (project.name !== resource.spec.name) changes.name = resource.spec.name;
    const wanted = resource.spec.autoCapitalization;
    if (wanted !== undefined && wanted !== project.autoCapitalization) changes.autoCapitalization = wanted;
    if (Object.keys(changes).length > 0) await this.#context.port.projects.update(project.id, changes);
  }

  async #convergeEnvironments(resource: SecretsProject, projectId: string): Promise<{ slug: string; id: string }[]> {
    const { projects } = this.#context.port;
    for (const wanted of resource.spec.environments ?? []) {
      const project = await projects.get(projectId);
      const current = project.environments.find((environment) => environment.slug === wanted.slug);
      if (!current) {
        await projects.createEnvironment(projectId, wanted);
        continue;
      }
      const detail = await projects.environment(projectId, current.id);
      const positionDiffers = wanted.position !== undefined && wanted.position !== detail.position;
      if (detail.name !== wanted.name || positionDiffers) {
        await projects.updateEnvironment(projectId, current.id, { name: wanted.name, position: positionDiffers ? wanted.position : undefined });
      }
    }
    const project = await projects.get(projectId);
    return project.environments.map(({ slug, id }) => ({ slug, id }));
  }

  /** The claim ends; with deletionPolicy Delete the project goes too, only if this resource created it. */
  async finalize(resource: SecretsProject): Promise<void> {
    await this.#context.port.projects.release(this.#claimantOf(resource), resource.spec.deletionPolicy === 'Delete').catch(ignoreCofferNotFound);
  }
}

function projectDeleted(resource: SecretsProject): Failure {
  const { slug, projectId } = resource.status ?? {};
  return {
    reason: 'ProjectDeleted',
    message: `project '${slug}' (${projectId}) was deleted through the API; it is not recreated (spec.onProjectDeleted: Fail) and the Integrations using it keep their last data. Set spec.onProjectDeleted to Recreate for a new, empty project, or delete this SecretsProject`,
    retry: 'on-change',
  };
}
