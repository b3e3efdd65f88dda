const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Ids that are not UUIDs can match no row; stores answer "not found" without asking the database. */
export function isUuid(value: string): boolean {
  return UUID.test(value);
}
