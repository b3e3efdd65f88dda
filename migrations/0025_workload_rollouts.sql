-- Consumer-aware rotation waits for rollouts to finish, not only to start: with the reload revision, the operator of
-- the Integration's cluster reports the workloads it reloads whose rollout has not completed (their status: the
-- new generation observed, every replica updated and available). A JSON array of {kind, namespace, name} (names
-- only, in the Integration's own namespace); empty when all are rolled out, null before the first report.
ALTER TABLE integrations ADD COLUMN rolling_workloads jsonb;

-- A secret rotation's phases reach the Integrations that read its place as changes of kind `rotation` (they alter no
-- secret): `rotation` says which rotation and which phase ({rotation: name, phase}), names only, never a value; the
-- operator records it as an Event on each of those Integrations.
ALTER TABLE change_log ADD COLUMN rotation jsonb;
