-- Dynamic secrets (issue 30 part 6): a PostgreSQL server's admin connection and the statement templates that create,
-- renew and revoke a short-lived role per lease. The connection and templates are sealed with the project's data key
-- (encrypted_inputs); only the TTLs and names are plain. A lease names the role it created (external_entity_id) and when
-- it expires; the expiry job claims due leases with revoke_claimed_until so that two replicas never revoke one lease at once.
CREATE TABLE dynamic_secrets (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  project_id uuid NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
  folder_id uuid NOT NULL REFERENCES secret_folders (id) ON DELETE CASCADE,
  name text NOT NULL,
  type text NOT NULL,
  version integer NOT NULL DEFAULT 1,
  default_ttl text NOT NULL,
  max_ttl text,
  encrypted_inputs bytea NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT dynamic_secrets_folder_name_key UNIQUE (folder_id, name)
);
CREATE INDEX dynamic_secrets_project_idx ON dynamic_secrets (project_id);

CREATE TABLE dynamic_secret_leases (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  dynamic_secret_id uuid NOT NULL REFERENCES dynamic_secrets (id) ON DELETE CASCADE,
  project_id uuid NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
  external_entity_id text NOT NULL,
  version integer NOT NULL DEFAULT 1,
  expire_at timestamptz NOT NULL,
  status text,
  status_details text,
  created_by text NOT NULL,
  revoke_claimed_until timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX dynamic_secret_leases_secret_idx ON dynamic_secret_leases (dynamic_secret_id);
CREATE INDEX dynamic_secret_leases_project_idx ON dynamic_secret_leases (project_id, created_by);
CREATE INDEX dynamic_secret_leases_expire_idx ON dynamic_secret_leases (expire_at);
