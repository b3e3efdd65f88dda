import type { Actor } from '../actor/actor.ts';
import { requireProject } from '../projects/project-lookup.ts';
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
    const project = await requireProject(this.#deps.db, projectId);
    await this.#deps.permissions.assertProjectPermission(actor, project, 'read', 'audit-logs');
    return this.#page({ ...this.#filter(query), orgId: project.orgId, projectId: project.id });
  }

  async organizationLogs(actor: Actor, query: OrgAuditQuery): Promise<AuditPage> {
    await this.#deps.permissions.assertOrgPermission(actor, actor.orgId, 'read', 'audit-logs');
    return this.#page({
      ...this.#filter(query),
      orgId: actor.orgId,
      projectId: query.projectId,
      actorType: query.actorType,
      eventMetadata: parseEventMetadataFilter(query.eventMetadata),
    });
  }

  #filter(query: AuditQuery): Omit<AuditLogFilter, 'orgId'> {
    return {
      eventTypes: query.eventType?.split(',').map((type) => type.trim()).filter(Boolean),
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
    const rows = await findAuditLogs(this.#deps.db, filter);
    const last = rows.at(-1);
    const page: AuditPage = { auditLogs: rows.map(toAuditLogEntry) };
    if (last && rows.length === filter.limit) page.nextCursor = encodeCursor(last);
    return page;
  }
}
