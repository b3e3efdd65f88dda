-- Access control: universal auth for machine identities, user sessions and
-- invites, custom project roles and additional privileges for identities.

CREATE TABLE identity_universal_auths (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  identity_id uuid NOT NULL UNIQUE REFERENCES identities (id) ON DELETE CASCADE,
  client_id uuid NOT NULL UNIQUE DEFAULT gen_random_uuid(),
  access_token_ttl integer NOT NULL CHECK (access_token_ttl >= 0),
  access_token_max_ttl integer NOT NULL CHECK (access_token_max_ttl >= 0),
  access_token_num_uses_limit integer NOT NULL DEFAULT 0 CHECK (access_token_num_uses_limit >= 0),
  client_secret_trusted_ips jsonb NOT NULL,
  access_token_trusted_ips jsonb NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE identity_ua_client_secrets (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  identity_ua_id uuid NOT NULL REFERENCES identity_universal_auths (id) ON DELETE CASCADE,
  description text NOT NULL DEFAULT '',
  client_secret_prefix text NOT NULL,
  -- SHA-256 of the secret (32 random bytes): looked up directly, never the secret itself
  client_secret_digest bytea NOT NULL UNIQUE,
  client_secret_last_used_at timestamptz,
  client_secret_num_uses integer NOT NULL DEFAULT 0,
  client_secret_num_uses_limit integer NOT NULL DEFAULT 0 CHECK (client_secret_num_uses_limit >= 0),
  client_secret_ttl integer NOT NULL DEFAULT 0 CHECK (client_secret_ttl >= 0),
  is_client_secret_revoked boolean NOT NULL DEFAULT false,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX identity_ua_client_secrets_ua_idx ON identity_ua_client_secrets (identity_ua_id);

ALTER TABLE identity_access_tokens
  ADD COLUMN identity_ua_client_secret_id uuid REFERENCES identity_ua_client_secrets (id) ON DELETE CASCADE;

-- Invites: the invited user exists without a password until they accept.
ALTER TABLE org_memberships ADD COLUMN invite_token_digest bytea UNIQUE;
ALTER TABLE org_memberships ADD COLUMN invite_expires_at timestamptz;

CREATE TABLE user_sessions (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  org_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  expires_at timestamptz NOT NULL,
  is_revoked boolean NOT NULL DEFAULT false,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX user_sessions_user_idx ON user_sessions (user_id);

CREATE TABLE project_roles (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  project_id uuid NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
  name text NOT NULL,
  slug text NOT NULL,
  description text,
  -- CASL rules: [{subject, action: [..], conditions?, inverted?}]
  permissions jsonb NOT NULL DEFAULT '[]',
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT project_roles_slug_key UNIQUE (project_id, slug)
);

-- A role in use cannot be deleted.
ALTER TABLE project_membership_roles
  ADD CONSTRAINT project_membership_roles_custom_role_fkey FOREIGN KEY (custom_role_id) REFERENCES project_roles (id);

CREATE TABLE identity_project_additional_privileges (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  slug text NOT NULL,
  identity_project_membership_id uuid NOT NULL REFERENCES identity_project_memberships (id) ON DELETE CASCADE,
  is_temporary boolean NOT NULL DEFAULT false,
  temporary_mode text,
  temporary_range text,
  temporary_access_start_time timestamptz,
  temporary_access_end_time timestamptz,
  permissions jsonb NOT NULL DEFAULT '[]',
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT identity_project_additional_privileges_slug_key UNIQUE (identity_project_membership_id, slug)
);
