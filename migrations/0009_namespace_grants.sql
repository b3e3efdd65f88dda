-- Kubernetes boundaries. A namespace grant lets the SecretsProjects and Integrations of one namespace of one
-- cluster use a project; project admins give and revoke them through the API. A project claim records which
-- SecretsProject declares a project (at most one), and whether it created the project (only then may its
-- deletionPolicy: Delete delete it).
CREATE TABLE namespace_grants (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  project_id uuid NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
  -- the cluster as its operator names itself (COFFER_CLUSTER_NAME), and a namespace in it
  cluster text NOT NULL,
  namespace text NOT NULL,
  -- 'api': a project admin gave it; 'created': a SecretsProject of this namespace created the project
  origin text NOT NULL,
  granted_by_type text NOT NULL,
  granted_by_id uuid NOT NULL,
  granted_by_name text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT namespace_grants_place_key UNIQUE (project_id, cluster, namespace)
);

CREATE TABLE project_claims (
  project_id uuid PRIMARY KEY REFERENCES projects (id) ON DELETE CASCADE,
  cluster text NOT NULL,
  namespace text NOT NULL,
  name text NOT NULL,
  -- metadata.uid of the SecretsProject: a resource deleted and made again is another claimant
  resource_uid text NOT NULL,
  created_project boolean NOT NULL,
  claimed_at timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT project_claims_resource_key UNIQUE (cluster, namespace, name)
);
