-- Audit timestamps at millisecond precision, so that a page cursor (which
-- carries a JavaScript date) names an entry's timestamp exactly.
ALTER TABLE audit_logs ALTER COLUMN created_at SET DEFAULT date_trunc('milliseconds', clock_timestamp());
ALTER TABLE audit_logs ALTER COLUMN updated_at SET DEFAULT date_trunc('milliseconds', clock_timestamp());
UPDATE audit_logs SET created_at = date_trunc('milliseconds', created_at), updated_at = date_trunc('milliseconds', updated_at);
