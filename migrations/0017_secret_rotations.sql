-- Connections to servers Coffer acts on (PostgreSQL for now), per project: the credentials are sealed with the
-- project's data key like secret values, bound to the connection's id.
CREATE TABLE app_connections (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  project_id uuid NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
  name text NOT NULL,
  description text,
  app text NOT NULL,
  method text NOT NULL,
  encrypted_credentials bytea NOT NULL,
  version integer NOT NULL DEFAULT 1,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT app_connections_name_key UNIQUE (project_id, name)
);

-- Secret rotations: PostgreSQL credentials (two roles taking turns) and generated secrets. The generated
-- credentials (the current pair and the one before) are sealed with the project's data key; a run under way keeps
-- what it set in pending_* so that a run interrupted at any step resumes with the same value.
CREATE TABLE secret_rotations (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  project_id uuid NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
  environment_id uuid NOT NULL REFERENCES project_environments (id) ON DELETE CASCADE,
  folder_id uuid NOT NULL REFERENCES secret_folders (id) ON DELETE CASCADE,
  secret_path text NOT NULL,
  type text NOT NULL,
  name text NOT NULL,
  description text,
  connection_id uuid REFERENCES app_connections (id) ON DELETE RESTRICT,
  -- non-secret settings: usernames, generator kind and length
  parameters jsonb NOT NULL,
  secrets_mapping jsonb NOT NULL,
  is_auto_rotation_enabled boolean NOT NULL,
  rotation_interval integer NOT NULL,
  rotate_at_utc jsonb NOT NULL,
  active_index integer NOT NULL DEFAULT 0,
  encrypted_generated_credentials bytea,
  pending_index integer,
  encrypted_pending_credentials bytea,
  -- success | failed | rotating
  rotation_status text NOT NULL,
  last_rotation_message text,
  last_rotation_attempted_at timestamptz,
  last_rotated_at timestamptz,
  next_rotation_at timestamptz,
  is_last_rotation_manual boolean NOT NULL DEFAULT false,
  -- consumer-aware retirement: the next run (which retires the credential before the active one) waits until every
  -- Integration that reads the maintained keys has synced (and, rolling workloads, reloaded) the last run's write;
  -- waiting longer than consumer_wait_minutes stops the rotation (status failed), never cuts a consumer off
  consumer_wait_minutes integer NOT NULL DEFAULT 60,
  -- the Integrations still pending, as cluster/namespace/name (names only)
  waiting_for jsonb,
  waiting_since timestamptz,
  -- the replica running it and until when its claim holds: another replica takes over only after it lapses
  run_claimed_until timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT secret_rotations_name_key UNIQUE (project_id, name)
);
CREATE INDEX secret_rotations_due_idx ON secret_rotations (next_rotation_at) WHERE is_auto_rotation_enabled;
