-- Workload login (Kubernetes Auth, JWT Auth): how an identity proves who it is with a token another system issued.
-- One configuration of each kind per identity, as universal auth; the token reviewer JWT is sealed under the root key
-- (re-sealed by `coffer rotate-key`), never stored in clear. CA certificates and public keys are not secrets.
CREATE TABLE identity_kubernetes_auths (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  identity_id uuid NOT NULL UNIQUE REFERENCES identities (id) ON DELETE CASCADE,
  kubernetes_host text NOT NULL,
  ca_cert text NOT NULL DEFAULT '',
  encrypted_token_reviewer_jwt bytea,
  allowed_namespaces text NOT NULL DEFAULT '',
  allowed_names text NOT NULL DEFAULT '',
  allowed_audience text NOT NULL DEFAULT '',
  access_token_ttl integer NOT NULL CHECK (access_token_ttl >= 0),
  access_token_max_ttl integer NOT NULL CHECK (access_token_max_ttl >= 0),
  access_token_num_uses_limit integer NOT NULL DEFAULT 0 CHECK (access_token_num_uses_limit >= 0),
  access_token_trusted_ips jsonb NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE identity_jwt_auths (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  identity_id uuid NOT NULL UNIQUE REFERENCES identities (id) ON DELETE CASCADE,
  configuration_type text NOT NULL CHECK (configuration_type IN ('jwks', 'static')),
  jwks_url text NOT NULL DEFAULT '',
  jwks_ca_cert text NOT NULL DEFAULT '',
  public_keys jsonb NOT NULL DEFAULT '[]',
  bound_issuer text NOT NULL DEFAULT '',
  bound_audiences text NOT NULL DEFAULT '',
  bound_claims jsonb NOT NULL DEFAULT '{}',
  bound_subject text NOT NULL DEFAULT '',
  access_token_ttl integer NOT NULL CHECK (access_token_ttl >= 0),
  access_token_max_ttl integer NOT NULL CHECK (access_token_max_ttl >= 0),
  access_token_num_uses_limit integer NOT NULL DEFAULT 0 CHECK (access_token_num_uses_limit >= 0),
  access_token_trusted_ips jsonb NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
