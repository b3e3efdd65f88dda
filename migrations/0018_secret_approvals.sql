-- Change control (issue 33, part 1): approval policies on an environment and a secret-path glob, and the change
-- requests a user's write to a protected place becomes. A request's proposed values are sealed with the project key,
-- bound to the request-secret row's id; nothing of a request reaches `secrets` or `change_log` before its merge.
CREATE TABLE secret_approval_policies (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  project_id uuid NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
  environment_id uuid NOT NULL REFERENCES project_environments (id) ON DELETE CASCADE,
  name text NOT NULL,
  secret_path text NOT NULL,
  approvals integer NOT NULL,
  -- 'hard': no bypass; 'soft': machine identities write directly and approvers may merge early, both audited
  enforcement_level text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT secret_approval_policies_name_key UNIQUE (project_id, name)
);

CREATE TABLE secret_approval_policy_approvers (
  policy_id uuid NOT NULL REFERENCES secret_approval_policies (id) ON DELETE CASCADE,
  user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  PRIMARY KEY (policy_id, user_id)
);

CREATE TABLE secret_approval_requests (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  project_id uuid NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
  policy_id uuid NOT NULL REFERENCES secret_approval_policies (id) ON DELETE CASCADE,
  folder_id uuid NOT NULL REFERENCES secret_folders (id) ON DELETE CASCADE,
  slug text NOT NULL,
  status text NOT NULL DEFAULT 'open',
  has_merged boolean NOT NULL DEFAULT false,
  committer_user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  status_changed_by_user_id uuid REFERENCES users (id) ON DELETE SET NULL,
  bypass_reason text,
  -- [{secretKey, op}] found at the last merge attempt
  conflicts jsonb NOT NULL DEFAULT '[]',
  -- the merging transaction (txid_current()): its change rows give the revision the merge committed at
  merged_xact bigint,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX secret_approval_requests_project_idx ON secret_approval_requests (project_id, created_at);

CREATE TABLE secret_approval_request_secrets (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  request_id uuid NOT NULL REFERENCES secret_approval_requests (id) ON DELETE CASCADE,
  op text NOT NULL,
  secret_key text NOT NULL,
  new_secret_key text,
  -- the shared secret and version the change was made against (null for a create): a merge finding another is a conflict
  secret_id uuid,
  secret_version integer,
  encrypted_value bytea,
  encrypted_comment bytea,
  skip_multiline_encoding boolean,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX secret_approval_request_secrets_request_idx ON secret_approval_request_secrets (request_id);

CREATE TABLE secret_approval_request_reviews (
  request_id uuid NOT NULL REFERENCES secret_approval_requests (id) ON DELETE CASCADE,
  reviewer_user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  status text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (request_id, reviewer_user_id)
);
