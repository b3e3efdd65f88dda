-- Foundation: organizations, users, machine identities and their access tokens,
-- projects with environments and folders, memberships, audit log and change log.

CREATE TABLE instance_state (
  id smallint PRIMARY KEY CHECK (id = 1),
  bootstrapped_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE organizations (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  name text NOT NULL,
  slug text NOT NULL UNIQUE,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE users (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  email text NOT NULL,
  username text NOT NULL,
  first_name text,
  last_name text,
  password_hash text,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX users_email_key ON users (lower(email));

CREATE TABLE org_memberships (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  org_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  user_id uuid REFERENCES users (id) ON DELETE CASCADE,
  role text NOT NULL,
  status text NOT NULL DEFAULT 'invited',
  invite_email text,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT org_memberships_user_key UNIQUE (org_id, user_id)
);

CREATE TABLE identities (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  name text NOT NULL,
  auth_method text,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE identity_org_memberships (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  org_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  identity_id uuid NOT NULL UNIQUE REFERENCES identities (id) ON DELETE CASCADE,
  role text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE identity_access_tokens (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  identity_id uuid NOT NULL REFERENCES identities (id) ON DELETE CASCADE,
  auth_method text NOT NULL,
  name text,
  access_token_ttl integer NOT NULL DEFAULT 0 CHECK (access_token_ttl >= 0),
  access_token_max_ttl integer NOT NULL DEFAULT 0 CHECK (access_token_max_ttl >= 0),
  access_token_num_uses integer NOT NULL DEFAULT 0,
  access_token_num_uses_limit integer NOT NULL DEFAULT 0 CHECK (access_token_num_uses_limit >= 0),
  access_token_last_used_at timestamptz,
  access_token_last_renewed_at timestamptz,
  is_access_token_revoked boolean NOT NULL DEFAULT false,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX identity_access_tokens_identity_idx ON identity_access_tokens (identity_id);

CREATE TABLE projects (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  name text NOT NULL,
  slug text NOT NULL,
  auto_capitalization boolean NOT NULL DEFAULT true,
  org_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  version integer NOT NULL DEFAULT 3,
  upgrade_status text,
  pit_version_limit integer NOT NULL DEFAULT 10,
  kms_certificate_key_id uuid,
  audit_logs_retention_days integer,
  -- the project's data key, wrapped (AES-256-GCM) by the root key
  encrypted_data_key bytea,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT projects_slug_key UNIQUE (org_id, slug)
);

CREATE TABLE project_environments (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  name text NOT NULL,
  slug text NOT NULL,
  position integer NOT NULL,
  project_id uuid NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT project_environments_slug_key UNIQUE (project_id, slug),
  -- deferred so that shifting positions inside one transaction never collides midway
  CONSTRAINT project_environments_position_key UNIQUE (project_id, position) DEFERRABLE INITIALLY DEFERRED
);

CREATE TABLE secret_folders (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  name text NOT NULL,
  version integer NOT NULL DEFAULT 1,
  env_id uuid NOT NULL REFERENCES project_environments (id) ON DELETE CASCADE,
  parent_id uuid REFERENCES secret_folders (id) ON DELETE CASCADE,
  is_reserved boolean NOT NULL DEFAULT false,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX secret_folders_root_key ON secret_folders (env_id) WHERE parent_id IS NULL;
CREATE UNIQUE INDEX secret_folders_name_key ON secret_folders (parent_id, name) WHERE parent_id IS NOT NULL;

CREATE TABLE project_memberships (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  project_id uuid NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
  user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT project_memberships_user_key UNIQUE (project_id, user_id)
);

CREATE TABLE identity_project_memberships (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  project_id uuid NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
  identity_id uuid NOT NULL REFERENCES identities (id) ON DELETE CASCADE,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT identity_project_memberships_identity_key UNIQUE (project_id, identity_id)
);

-- One table for the roles of both kinds of membership; exactly one owner column is set.
CREATE TABLE project_membership_roles (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  project_membership_id uuid REFERENCES project_memberships (id) ON DELETE CASCADE,
  identity_project_membership_id uuid REFERENCES identity_project_memberships (id) ON DELETE CASCADE,
  role text NOT NULL,
  custom_role_id uuid,
  is_temporary boolean NOT NULL DEFAULT false,
  temporary_mode text,
  temporary_range text,
  temporary_access_start_time timestamptz,
  temporary_access_end_time timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  CHECK ((project_membership_id IS NULL) <> (identity_project_membership_id IS NULL))
);
CREATE INDEX project_membership_roles_user_idx ON project_membership_roles (project_membership_id);
CREATE INDEX project_membership_roles_identity_idx ON project_membership_roles (identity_project_membership_id);

-- No foreign keys: audit rows outlive the projects and organizations they describe.
CREATE TABLE audit_logs (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  actor text NOT NULL,
  actor_metadata jsonb NOT NULL DEFAULT '{}',
  ip_address text,
  event_type text NOT NULL,
  event_metadata jsonb NOT NULL DEFAULT '{}',
  user_agent text,
  user_agent_type text,
  expires_at timestamptz,
  org_id uuid,
  project_id uuid,
  project_name text,
  created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  updated_at timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX audit_logs_project_idx ON audit_logs (project_id, created_at DESC, id DESC);
CREATE INDEX audit_logs_org_idx ON audit_logs (org_id, created_at DESC, id DESC);
CREATE INDEX audit_logs_expires_idx ON audit_logs (expires_at);

-- Every mutation that can change what a path resolves to; read by the operator's change feed.
CREATE TABLE change_log (
  revision bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  project_id uuid NOT NULL,
  environment_id uuid,
  environment_slug text,
  secret_path text,
  kind text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX change_log_project_idx ON change_log (project_id, revision);
