-- Point-in-time state of folders (issue 33, part 2). A shared secret's state at a revision is its newest version
-- written by a transaction whose change rows are at or below that revision, unless a deletion followed: versions and
-- deletions carry the writing transaction (txid_current(), as change_log.xact does), so no write path has to know its
-- revision. Versions written before this migration have no transaction and count as older than every revision.
ALTER TABLE secret_versions ADD COLUMN xact bigint;
ALTER TABLE secret_versions ALTER COLUMN xact SET DEFAULT txid_current();
CREATE INDEX secret_versions_folder_idx ON secret_versions (folder_id, secret_id, version);

CREATE TABLE secret_deletions (
  secret_id uuid NOT NULL,
  folder_id uuid NOT NULL,
  version integer NOT NULL,
  xact bigint NOT NULL DEFAULT txid_current(),
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX secret_deletions_folder_idx ON secret_deletions (folder_id, secret_id);
CREATE INDEX change_log_xact_idx ON change_log (xact);

-- Every deletion of a shared secret, by any path (single, batch, a folder's or an environment's cascade), leaves a mark.
CREATE FUNCTION record_secret_deletion() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF OLD.type = 'shared' THEN
    INSERT INTO secret_deletions (secret_id, folder_id, version) VALUES (OLD.id, OLD.folder_id, OLD.version);
  END IF;
  RETURN OLD;
END;
$$;
CREATE TRIGGER secrets_record_deletion AFTER DELETE ON secrets FOR EACH ROW EXECUTE FUNCTION record_secret_deletion();

-- Webhooks (issue 33, part 3): deliveries follow the change feed from a per-webhook cursor, so a receiver that is
-- down misses nothing; the cursor moves only past delivered (or non-matching) revisions. A replica claims a webhook
-- with a lease (SKIP LOCKED), so several replicas never deliver the same revision at once.
CREATE TABLE webhooks (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  project_id uuid NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
  environment_id uuid NOT NULL REFERENCES project_environments (id) ON DELETE CASCADE,
  secret_path text NOT NULL,
  url text NOT NULL,
  -- the signing key, sealed with the project key; never answered after creation
  encrypted_secret_key bytea NOT NULL,
  is_disabled boolean NOT NULL DEFAULT false,
  consecutive_failures integer NOT NULL DEFAULT 0,
  cursor_revision bigint NOT NULL,
  next_attempt_at timestamptz NOT NULL DEFAULT now(),
  lease_until timestamptz,
  last_status text,
  last_run_error_message text,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX webhooks_due_idx ON webhooks (next_attempt_at) WHERE NOT is_disabled;
CREATE INDEX webhooks_project_idx ON webhooks (project_id);

CREATE TABLE webhook_deliveries (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  webhook_id uuid NOT NULL REFERENCES webhooks (id) ON DELETE CASCADE,
  revision bigint NOT NULL,
  attempt integer NOT NULL,
  status text NOT NULL,
  response_status integer,
  error text,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX webhook_deliveries_webhook_idx ON webhook_deliveries (webhook_id, created_at);
