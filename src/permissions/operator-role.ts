import { type Action, OPERATOR_NEEDS, type PermissionNeed, type ProjectSubject } from './permission-rules.ts';

export { OPERATOR_NEEDS, OPERATOR_ROLE_SLUG, type PermissionNeed } from './permission-rules.ts';

/** The needs a caller's permissions lack (`can`: whether it may take an action on a subject somewhere in the project). */
export function missingNeeds(can: (action: Action, subject: ProjectSubject) => boolean, needs: readonly PermissionNeed[] = OPERATOR_NEEDS): PermissionNeed[] {
  return needs.flatMap(({ subject, actions }) => {
    const missing = actions.filter((action) => !can(action, subject));
    return missing.length > 0 ? [{ subject, actions: missing }] : [];
  });
}

/** `secrets: read; integrations: create, edit`, for a log line or a condition. */
export function describeNeeds(needs: readonly PermissionNeed[]): string {
  return needs.map(({ subject, actions }) => `${subject}: ${actions.join(', ')}`).join('; ');
}
