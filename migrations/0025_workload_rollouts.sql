-- Consumer-aware rotation waits for rollouts to finish, not only to start: with the reload revision, the operator of
-- the Integration's cluster reports the workloads it reloads whose rollout has not completed (their status: the
-- new generation observed, every replica updated and available). A JSON array of {kind, namespace, name} (names
-- only, in the Integration's own namespace); empty when all are rolled out, null before the first report.
ALTER TABLE integrations ADD COLUMN rolling_workloads jsonb;
