-- A recursive restore brings back folders deleted since its revision (issue: every commit to a folder is recoverable).
-- Design: a deleted folder's secret history stays where it is. secret_versions no longer cascades with its folder (as
-- secret_deletions never did): versions keep the dead folder's id, so listSecretStatesAt answers for a deleted folder
-- exactly as for a live one, and no current query changes (every reader of secret_versions starts from a live secret
-- or a live folder id). A trigger records each deleted folder: its environment, its path when deleted, and the
-- transactions that created and deleted it (mapped to revisions through change_log, as versions are).
-- Retention: as secret versions today, kept until the environment goes (no version is pruned anywhere); deleting an
-- environment or project removes its folders' versions and these records, so nothing outlives the environment.
ALTER TABLE secret_versions DROP CONSTRAINT secret_versions_folder_id_fkey;

-- Folders made before this migration have no transaction and count as older than every revision.
ALTER TABLE secret_folders ADD COLUMN xact bigint;
ALTER TABLE secret_folders ALTER COLUMN xact SET DEFAULT txid_current();

CREATE TABLE deleted_folders (
  folder_id uuid NOT NULL,
  env_id uuid NOT NULL REFERENCES project_environments (id) ON DELETE CASCADE,
  path text NOT NULL,
  created_xact bigint,
  xact bigint NOT NULL DEFAULT txid_current(),
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX deleted_folders_env_path_idx ON deleted_folders (env_id, path);
-- the trigger below finds a deleted parent's record by its id, once per folder of a deleted subtree
CREATE INDEX deleted_folders_folder_idx ON deleted_folders (folder_id);

-- BEFORE DELETE, so the top deleted folder's parents still exist; a folder deleted by the cascade below it finds its
-- parent's record, written by the parent's own trigger earlier in the same transaction. When the environment itself
-- is going (environment or project deletion), nothing is recorded and the folder's history goes with it.
CREATE FUNCTION record_folder_deletion() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  parent_path text;
BEGIN
  IF NOT EXISTS (SELECT 1 FROM project_environments WHERE id = OLD.env_id) THEN
    DELETE FROM secret_versions WHERE folder_id = OLD.id;
    DELETE FROM secret_deletions WHERE folder_id = OLD.id;
    RETURN OLD;
  END IF;
  IF OLD.parent_id IS NULL THEN
    RETURN OLD;
  END IF;
  SELECT d.path INTO parent_path FROM deleted_folders d WHERE d.folder_id = OLD.parent_id AND d.xact = txid_current();
  IF parent_path IS NULL THEN
    WITH RECURSIVE up AS (
      SELECT id, parent_id, name, 0 AS depth FROM secret_folders WHERE id = OLD.parent_id
      UNION ALL
      SELECT p.id, p.parent_id, p.name, up.depth + 1 FROM secret_folders p JOIN up ON p.id = up.parent_id
    )
    SELECT '/' || coalesce(string_agg(name, '/' ORDER BY depth DESC) FILTER (WHERE parent_id IS NOT NULL), '') INTO parent_path FROM up;
  END IF;
  INSERT INTO deleted_folders (folder_id, env_id, path, created_xact)
  VALUES (OLD.id, OLD.env_id, CASE WHEN parent_path = '/' THEN '/' ELSE parent_path || '/' END || OLD.name, OLD.xact);
  RETURN OLD;
END;
$$;
CREATE TRIGGER secret_folders_record_deletion BEFORE DELETE ON secret_folders FOR EACH ROW EXECUTE FUNCTION record_folder_deletion();
