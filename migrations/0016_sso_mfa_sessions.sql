-- Single sign-on (OIDC per organization), enforced SSO and MFA per organization, TOTP for password users, and
-- sessions a user can see. Client secrets, TOTP secrets and PKCE verifiers are sealed under the root key (re-sealed
-- by `coffer rotate-key`); state values and recovery codes are stored as SHA-256 digests only.
ALTER TABLE organizations ADD COLUMN auth_enforced boolean NOT NULL DEFAULT false;
ALTER TABLE organizations ADD COLUMN enforce_mfa boolean NOT NULL DEFAULT false;

CREATE TABLE org_oidc_configs (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  org_id uuid NOT NULL UNIQUE REFERENCES organizations (id) ON DELETE CASCADE,
  issuer text NOT NULL,
  client_id text NOT NULL,
  encrypted_client_secret bytea NOT NULL,
  scopes text NOT NULL,
  -- lower-case domains; an empty list allows none
  allowed_email_domains jsonb NOT NULL,
  groups_claim text NOT NULL,
  -- [{group, orgRole?} | {group, projectId, projectRole}]
  group_mappings jsonb NOT NULL,
  default_org_role text NOT NULL,
  is_active boolean NOT NULL DEFAULT true,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);

-- One row per sign-in under way: consumed (deleted) by its callback, whatever the outcome.
CREATE TABLE oidc_login_states (
  state_digest bytea PRIMARY KEY,
  org_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  nonce text NOT NULL,
  encrypted_code_verifier bytea NOT NULL,
  user_agent text,
  expires_at timestamptz NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX oidc_login_states_expiry_idx ON oidc_login_states (expires_at);

-- The project roles a group mapping gave a user: removed again when the mapping no longer applies at a sign-in.
ALTER TABLE project_membership_roles ADD COLUMN granted_by_sso boolean NOT NULL DEFAULT false;

CREATE TABLE user_totp (
  user_id uuid PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
  encrypted_secret bytea NOT NULL,
  confirmed_at timestamptz,
  -- the last 30-second step a code was accepted for: a code is good once
  last_used_step bigint,
  created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE user_recovery_codes (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  code_digest bytea NOT NULL,
  used_at timestamptz,
  CONSTRAINT user_recovery_codes_digest_key UNIQUE (user_id, code_digest)
);

ALTER TABLE user_sessions ADD COLUMN auth_method text NOT NULL DEFAULT 'email';
ALTER TABLE user_sessions ADD COLUMN ip text;
ALTER TABLE user_sessions ADD COLUMN user_agent text;

-- When a session was last used: kept apart from user_sessions so that recording a use moves no cache version.
CREATE TABLE user_session_activity (
  session_id uuid PRIMARY KEY REFERENCES user_sessions (id) ON DELETE CASCADE,
  last_used_at timestamptz NOT NULL,
  ip text
);
