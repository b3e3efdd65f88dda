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
