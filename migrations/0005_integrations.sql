-- Integrations: where a project's secrets are synced to. The operator keeps one
-- "kubernetes" integration per Integration resource; integration auths hold
-- provider credentials (sealed with the project data key).

CREATE TABLE integration_auths (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  project_id uuid NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
  integration text NOT NULL,
  team_id text,
  url text,
  namespace text,
  account_id text,
  metadata jsonb,
  encrypted_access bytea,
  encrypted_access_id bytea,
  encrypted_refresh bytea,
  access_expires_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX integration_auths_project_idx ON integration_auths (project_id, integration);

CREATE TABLE integrations (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  integration_auth_id uuid NOT NULL REFERENCES integration_auths (id) ON DELETE CASCADE,
  env_id uuid NOT NULL REFERENCES project_environments (id) ON DELETE CASCADE,
  integration text NOT NULL,
  is_active boolean NOT NULL DEFAULT true,
  secret_path text NOT NULL DEFAULT '/',
  url text,
  app text,
  app_id text,
  target_environment text,
  target_environment_id text,
  target_service text,
  target_service_id text,
  owner text,
  path text,
  region text,
  scope text,
  metadata jsonb NOT NULL DEFAULT '{}',
  -- set when a Kubernetes Integration resource owns this record: "<namespace>/<name>"
  managed_by text UNIQUE,
  is_synced boolean,
  sync_message text,
  synced_revision bigint,
  last_used timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX integrations_env_idx ON integrations (env_id);
