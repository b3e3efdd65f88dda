import type { Actor } from '../actor/actor.ts';
import { listProjectsOfOrg } from '../projects/project-lookup.ts';
import type { ServiceDeps } from '../services/deps.ts';
import { type AuditLogFilter, findAuditLogs } from './audit-store.ts';
import { type AuditLogEntry, decodeCursor, encodeCursor, parseEventMetadataFilter, toAuditLogEntry, userAgentTypesMatching } from './audit-schema.ts';

export interface AuditQuery {
  eventType?: string;
  userAgentType?: string;
  startDate?: string;
  endDate?: string;
  offset: number;
  limit: number;
  actor?: string;
  cursor?: string;
}

export interface OrgAuditQuery extends AuditQuery {
  projectId?: string;
  actorType?: string;
  eventMetadata?: string;
}

export interface AuditPage {
  auditLogs: AuditLogEntry[];
  /** Pass back as `cursor` for the next (older) page; absent on the last page. */
  nextCursor?: string;
}

/** Exports the audit log of a project or of a whole organization, newest first. */
export class AuditExportService {
  readonly #deps: ServiceDeps;

  constructor(deps: ServiceDeps) {
    this.#deps = deps;
  }

  async projectLogs(actor: Actor, projectId: string, query: AuditQuery): Promise<AuditPage> {
    const project = await this.#deps.lookups.requireProject(this.#deps.db, { id: projectId });
    await this.#deps.permissions.assertProject({ actor, project, action: 'read', subject: 'audit-logs' });
    return this.#page({ ...this.#filter(query), orgId: project.orgId, projectId: project.id });
  }

  /**
   * The organization's log as far as the caller may read it: the entries of
   * projects whose audit log it may read, and organization-level entries when
   * its org role may read the organization's audit log. `projectId` narrows to
   * one project, which must be one of those (404 unknown, 403 not readable).
   */
  async organizationLogs(actor: Actor, query: OrgAuditQuery): Promise<AuditPage> {
    const scope = query.projectId ? { projectId: await this.#readableProject(actor, query.projectId) } : await this.#visibleScope(actor);
    return this.#page({
      ...this.#filter(query),
      orgId: actor.orgId,
      ...scope,
      actorType: query.actorType,
      eventMetadata: parseEventMetadataFilter(query.eventMetadata),
    });
  }

  async #readableProject(actor: Actor, projectId: string): Promise<string> {
    const project = await this.#deps.lookups.requireProject(this.#deps.db, { id: projectId });
    await this.#deps.permissions.assertProject({ actor, project, action: 'read', subject: 'audit-logs' });
    return project.id;
  }

  /** Org admins see the whole organization; others their readable projects, and org events if their org role allows. */
  async #visibleScope(actor: Actor): Promise<Pick<AuditLogFilter, 'visible'>> {
    const { db, permissions } = this.#deps;
    if (actor.orgRole === 'admin') return {};
    const orgEvents = (await permissions.forOrg(actor, actor.orgId)).can('read', 'audit-logs');
    const projectIds: string[] = [];
    for (const project of await listProjectsOfOrg(db, actor.orgId, { kind: actor.kind, id: actor.id })) {
      if ((await permissions.forProject(actor, project)).can('read', 'audit-logs')) projectIds.push(project.id);
    }
    return { visible: { projectIds, orgEvents } };
  }

  #filter(query: AuditQuery): Omit<AuditLogFilter, 'orgId'> {
    return {
      eventTypes: query.eventType
        ?.split(',')
        .map((type) => type.trim())
        .filter(Boolean),
      userAgentTypes: userAgentTypesMatching(query.userAgentType),
      actorId: query.actor,
      startDate: query.startDate ? new Date(query.startDate) : undefined,
      endDate: query.endDate ? new Date(query.endDate) : undefined,
      before: query.cursor ? decodeCursor(query.cursor) : undefined,
      offset: query.offset,
      limit: query.limit,
    };
  }

  async #page(filter: AuditLogFilter): Promise<AuditPage> {
    if (filter.visible && filter.visible.projectIds.length === 0 && !filter.visible.orgEvents) return { auditLogs: [] };
    const rows = await findAuditLogs(this.#deps.db, filter);
    const last = rows.at(-1);
    const page: AuditPage = { auditLogs: rows.map(toAuditLogEntry) };
    if (last && rows.length === filter.limit) page.nextCursor = encodeCursor(last);
    return page;
  }
}
