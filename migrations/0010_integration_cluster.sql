-- Many clusters, one Coffer: an Integration resource is named by its cluster as well as its namespace and
-- name. `cluster` is the name its operator gives the cluster (COFFER_CLUSTER_NAME); `managed_by`
-- ("<namespace>/<name>") is unique within a cluster, no longer across all of them.
ALTER TABLE integrations ADD COLUMN cluster text;
UPDATE integrations SET cluster = COALESCE(NULLIF(metadata ->> 'cluster', ''), 'local') WHERE managed_by IS NOT NULL;
ALTER TABLE integrations DROP CONSTRAINT integrations_managed_by_key;
ALTER TABLE integrations ADD CONSTRAINT integrations_cluster_managed_by_key UNIQUE (cluster, managed_by);
ALTER TABLE integrations ADD CONSTRAINT integrations_managed_has_cluster CHECK (managed_by IS NULL OR cluster IS NOT NULL);
