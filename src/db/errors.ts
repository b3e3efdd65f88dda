/** True for a unique-constraint violation, optionally of one named constraint. */
export function isUniqueViolation(error: unknown, constraint?: string): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const { code, constraint: violated } = error as { code?: string; constraint?: string };
  return code === '23505' && (constraint === undefined || violated === constraint);
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Ids that are not UUIDs can match no row; stores answer "not found" without asking the database. */
export function isUuid(value: string): boolean {
  return UUID.test(value);
}
