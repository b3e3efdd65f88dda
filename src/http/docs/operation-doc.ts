import {
  type Action,
  BUILT_IN_PROJECT_ROLES,
  ORG_ROLES,
  type OrgSubject,
  orgRoleRules,
  type ProjectSubject,
} from '../../permissions/permission-rules.ts';

/**
 * How a route describes itself in the API reference, next to its schema:
 *
 *   schema: { tags, ...describeRoute({ summary, description, permission, effects }), body, response }
 *
 * The description people read is assembled here in one shape for every
 * operation: what it does, who may call it, what it changes and audits.
 */

/** The status codes an operation may answer with the documented error body, beyond the ones derived for it. */
export type ErrorStatus = 400 | 401 | 403 | 404 | 409 | 422 | 429;

/** `permission` of the routes that need no access token. */
export const PUBLIC = 'public';

export interface OperationDoc {
  /** A short title (the sidebar entry). */
  summary: string;
  /** What the operation does, in a sentence or a few (Markdown). */
  description: string;
  /** Who may call it: the permission it checks (`secrets: read` in the project …), or PUBLIC. */
  permission: string;
  /** What it changes and which audit event it records; for reads, what it records if anything. */
  effects: string;
  /** Error statuses beyond the derived ones (401/403 with a token, 422 with input, 400 with a body, 404 with a resource named). */
  errors?: ErrorStatus[];
}

/** The route-schema keys of an operation's documentation (`x-coffer-errors` is consumed by the OpenAPI document). */
export interface RouteDoc {
  summary: string;
  description: string;
  security?: [];
  'x-coffer-errors'?: ErrorStatus[];
}

export function describeRoute(doc: OperationDoc): RouteDoc {
  const isPublic = doc.permission === PUBLIC;
  const who = isPublic ? 'anyone: no access token is needed.' : doc.permission;
  const description = `${doc.description}\n\n**Who may call it:** ${who}\n\n**Effects:** ${doc.effects}`;
  return {
    summary: doc.summary,
    description,
    ...(isPublic ? { security: [] as [] } : {}),
    ...(doc.errors?.length ? { 'x-coffer-errors': doc.errors } : {}),
  };
}

/** Project roles whose built-in rules allow `action` on `subject`, from the same table the permission checks use. */
function projectRolesWith(action: Action, subject: ProjectSubject): string[] {
  return Object.entries(BUILT_IN_PROJECT_ROLES)
    .filter(([, role]) => role.rules.some((rule) => rule.subject === subject && rule.action.includes(action)))
    .map(([slug]) => `\`${slug}\``);
}

/** A project permission, the built-in roles that hold it, and whether rules may narrow it to environments and paths. */
export function projectPermission(action: Action, subject: ProjectSubject, scope?: 'path'): string {
  const where = scope === 'path' ? ' for the environment and secret path of the request (custom roles may grant it for some paths only)' : '';
  return `\`${action}\` on \`${subject}\` in the project${where}: the project roles ${projectRolesWith(action, subject).join(', ')}, custom roles and privileges that grant it, and organization admins.`;
}

/** An organization permission and the organization roles that hold it. */
export function orgPermission(action: Action, subject: OrgSubject): string {
  const roles = ORG_ROLES.filter((role) => orgRoleRules(role).some((rule) => rule.subject === subject && rule.action.includes(action)));
  return `\`${action}\` on \`${subject}\` in the organization: the organization roles ${roles.map((role) => `\`${role}\``).join(', ')}.`;
}

/** The effects line of a change: what it changes and the audit event it records in the same transaction. */
export function changes(what: string, auditEvent: string): string {
  return `${what} Recorded in the audit log as \`${auditEvent}\`, in the same transaction as the change.`;
}

/** The effects line of a read. */
export function reads(auditEvent?: string): string {
  return auditEvent ? `Changes nothing. The read is recorded in the audit log as \`${auditEvent}\`.` : 'Changes nothing and records nothing.';
}
