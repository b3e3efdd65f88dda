-- Registered clusters. An organization admin registers each Kubernetes cluster that syncs from Coffer (a name unique
-- in the organization) and binds the machine identities that act for it: an identity acts for at most one cluster.
-- Every grant match, claim, integration record and sync result of a remote operator is keyed by the cluster its
-- credential is bound to, never by a name in the request. The in-process operator's cluster (COFFER_CLUSTER_NAME,
-- `local` by default) is never registered: its name is reserved.
CREATE TABLE clusters (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  org_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  name text NOT NULL,
  description text NOT NULL DEFAULT '',
  created_at timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT clusters_org_name_key UNIQUE (org_id, name)
);

CREATE TABLE cluster_identities (
  identity_id uuid PRIMARY KEY REFERENCES identities (id) ON DELETE CASCADE,
  cluster_id uuid NOT NULL REFERENCES clusters (id) ON DELETE CASCADE,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX cluster_identities_cluster_idx ON cluster_identities (cluster_id);

-- Claims per cluster: a project may be declared by one SecretsProject in each cluster (each through its own grant),
-- and a claim is named by organization, cluster, namespace and name. The identity that declared it is recorded.
ALTER TABLE project_claims ADD COLUMN org_id uuid REFERENCES organizations (id) ON DELETE CASCADE;
UPDATE project_claims SET org_id = p.org_id FROM projects p WHERE p.id = project_claims.project_id;
ALTER TABLE project_claims ALTER COLUMN org_id SET NOT NULL;
ALTER TABLE project_claims ADD COLUMN claimed_by_identity_id uuid;
ALTER TABLE project_claims DROP CONSTRAINT project_claims_pkey;
ALTER TABLE project_claims DROP CONSTRAINT project_claims_resource_key;
ALTER TABLE project_claims ADD COLUMN id uuid NOT NULL DEFAULT gen_random_uuid();
ALTER TABLE project_claims ADD CONSTRAINT project_claims_pkey PRIMARY KEY (id);
ALTER TABLE project_claims ADD CONSTRAINT project_claims_resource_key UNIQUE (org_id, cluster, namespace, name);
ALTER TABLE project_claims ADD CONSTRAINT project_claims_project_cluster_key UNIQUE (project_id, cluster);

-- An Integration resource's record is named by organization too: two organizations may each have a cluster `prod`.
ALTER TABLE integrations ADD COLUMN cluster_org_id uuid REFERENCES organizations (id) ON DELETE CASCADE;
UPDATE integrations SET cluster_org_id = p.org_id
  FROM project_environments e JOIN projects p ON p.id = e.project_id
  WHERE e.id = integrations.env_id AND integrations.managed_by IS NOT NULL;
ALTER TABLE integrations DROP CONSTRAINT integrations_cluster_managed_by_key;
ALTER TABLE integrations ADD CONSTRAINT integrations_cluster_managed_by_key UNIQUE (cluster_org_id, cluster, managed_by);
ALTER TABLE integrations ADD CONSTRAINT integrations_managed_has_org CHECK (managed_by IS NULL OR cluster_org_id IS NOT NULL);
