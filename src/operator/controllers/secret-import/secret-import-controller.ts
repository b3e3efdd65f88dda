import { normalizeSecretPath } from '../../../folders/secret-path.ts';
import type { ImportLocation, SecretImport } from '../../port/coffer-port.ts';
import type { SecretImportResource } from '../../resources.ts';
import { type Controller, done, type ReconcileResult, type Watches } from '../../runtime/controller.ts';
import type { CachedInformer } from '../../runtime/informers.ts';
import { keyOf } from '../../runtime/object-key.ts';
import type { ControllerContext } from '../context.ts';
import { ignoreCofferNotFound } from '../failures.ts';
import { resolveProject, usesProject } from '../project-resolution.ts';

/** SecretImport → a secret import in the project (op 7), kept as the spec says (op 4), deleted with the resource. */
export class SecretImportController implements Controller<SecretImportResource> {
  readonly kind = 'SecretImport';
  readonly failureConditions = ['Ready'] as const;
  readonly informer: CachedInformer<SecretImportResource>;
  readonly #context: ControllerContext;

  constructor(context: ControllerContext) {
    this.#context = context;
    this.informer = context.informers.imports;
  }

  /** Its SecretsProject changing, and a grant given or revoked on its project, decide again. */
  setup(watches: Watches): void {
    const { projects } = this.#context.informers;
    const usersOf = (project: Parameters<typeof usesProject>[0]) =>
      this.informer
        .list()
        .filter((resource) => usesProject(project, resource))
        .map((resource) => keyOf('SecretImport', resource));
    watches.informer(projects, usersOf);
    watches.changes((changes) =>
      changes
        .filter((change) => change.kind === 'access')
        .flatMap((change) =>
          projects
            .list()
            .filter((project) => project.status?.projectId === change.projectId)
            .flatMap(usersOf),
        ),
    );
  }

  async reconcile(resource: SecretImportResource): Promise<ReconcileResult> {
    const context = this.#context;
    const project = await resolveProject(context, resource.metadata.namespace, resource.spec);
    const secretImport = await this.#converge(resource, project.projectId);
    await context.status.write('SecretImport', resource, { secretImportId: secretImport.id, projectId: project.projectId }, [
      { type: 'Ready', status: 'True', reason: 'Reconciled', message: `imports ${resource.spec.import.environment}:${secretImport.source.path}` },
    ]);
    return done();
  }

  /** Level-triggered: the import named in the status, else the one already importing this source (a lost status write), else a new one. */
  async #converge(resource: SecretImportResource, projectId: string): Promise<SecretImport> {
    const { imports } = this.#context.port;
    const { spec } = resource;
    const where = location(resource, projectId);
    const wantedPath = normalizeSecretPath(spec.import.path);
    const existingId = resource.status?.projectId === projectId ? resource.status.secretImportId : undefined;
    const existing =
      (existingId ? await imports.get(existingId).catch(ignoreCofferNotFound) : undefined) ??
      (await imports.list(where)).find((entry) => entry.source.environment === spec.import.environment && entry.source.path === wantedPath);
    if (!existing) {
      const created = await imports.create(where, spec.import);
      if (spec.position === undefined || spec.position === created.position) return created;
      return imports.update(created.id, where, { position: spec.position });
    }
    const drifted =
      existing.source.environment !== spec.import.environment ||
      existing.source.path !== wantedPath ||
      (spec.position !== undefined && spec.position !== existing.position);
    if (!drifted) return existing;
    return imports.update(existing.id, where, { environment: spec.import.environment, path: wantedPath, position: spec.position });
  }

  /** The import goes with the resource (already gone is fine). */
  async finalize(resource: SecretImportResource): Promise<void> {
    const { secretImportId, projectId } = resource.status ?? {};
    if (secretImportId && projectId) await this.#context.port.imports.delete(secretImportId, location(resource, projectId)).catch(ignoreCofferNotFound);
  }
}

function location(resource: SecretImportResource, projectId: string): ImportLocation {
  return { projectId, environment: resource.spec.environment, path: resource.spec.path ?? '/' };
}
