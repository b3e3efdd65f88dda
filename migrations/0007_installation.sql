-- One row per database: the installation's identity and the check value of its root key.
-- `id` names this installation to the Kubernetes objects its operator manages (Lease, managed
-- Secrets, resource status), so that another installation's operator never takes them over.
-- `root_key_check` is an HMAC-SHA256 under a key derived (HKDF) from the root key: it tells
-- whether a root key is this database's without holding or revealing the key.
CREATE TABLE installation (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  singleton boolean NOT NULL DEFAULT true UNIQUE CHECK (singleton),
  root_key_check bytea,
  root_key_rotated_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now()
);
INSERT INTO installation DEFAULT VALUES;
