import type { Actor } from '../actor/actor.ts';
import type { Change } from '../changes/change-feed.ts';
import type { Project } from '../db/schema.ts';
import type { Action } from '../permissions/permission-service.ts';
import type { ServiceDeps } from '../services/deps.ts';
import type { WriteContext } from '../services/unit-of-work.ts';
import type { Target } from './integration-inputs.ts';
import type { IntegrationRow } from './integration-store.ts';

/** The project, locked (writes on its integrations and their auths are serialized), after the permission check on integrations. */
export async function lockIntegrationsOf(tx: WriteContext, projectId: string, action: Action): Promise<Project> {
  const project = await tx.project({ id: projectId }, { lock: true });
  await tx.authorize({ project, action, subject: 'integrations' });
  return project;
}

/** The project, after the check that the actor may read its integrations. */
export async function readableIntegrationsOf(deps: ServiceDeps, actor: Actor, projectId: string): Promise<Project> {
  const project = await deps.lookups.requireProject(deps.db, { id: projectId });
  await deps.permissions.assertProject({ actor, project, action: 'read', subject: 'integrations' });
  return project;
}

/** Where an integration reads from: what its change rows and audit entries name. */
export interface IntegrationSource {
  projectId: string;
  envId: string;
  envSlug: string;
  secretPath: string;
}

export function integrationChange(source: IntegrationSource): Change {
  return {
    projectId: source.projectId,
    environmentId: source.envId,
    environmentSlug: source.envSlug,
    secretPath: source.secretPath,
    kind: 'integration',
  };
}

/** One change per distinct environment and path. */
export function integrationChanges(sources: IntegrationSource[]): Change[] {
  const seen = new Map<string, Change>();
  for (const source of sources) seen.set(`${source.envId}:${source.secretPath}`, integrationChange(source));
  return [...seen.values()];
}

/** The entries whose value is neither null nor undefined (the reference's `shake`). */
export function withoutEmpty(metadata: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(metadata).filter(([, value]) => value !== null && value !== undefined));
}

/** The audit metadata the reference writes for create, delete and manual sync. */
export function describeIntegration(row: IntegrationRow): Record<string, unknown> {
  return withoutEmpty({
    integrationId: row.id,
    integration: row.integration,
    environment: row.envSlug,
    secretPath: row.secretPath,
    url: row.url,
    app: row.app,
    appId: row.appId,
    targetEnvironment: row.targetEnvironment,
    targetEnvironmentId: row.targetEnvironmentId,
    targetService: row.targetService,
    targetServiceId: row.targetServiceId,
    path: row.path,
    region: row.region,
  });
}

/** Every target field unset, for a new record. */
export function emptyTarget(): Required<Target> {
  return {
    url: null,
    app: null,
    appId: null,
    targetEnvironment: null,
    targetEnvironmentId: null,
    targetService: null,
    targetServiceId: null,
    owner: null,
    path: null,
    region: null,
    scope: null,
  };
}
