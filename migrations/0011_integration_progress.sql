-- The revision barrier (GET /api/v1/changes/wait): what each Integration's last sync read, and how far its
-- workload reload got. `read_places` is a JSON array of {environmentId, path, recursive}: the sources (recursive
-- ones with what lies below) and every folder read through imports and references, as the operator reports it.
-- `reloads`: the Integration rolls workloads (spec.reload), so a write has reached it only once
-- `reloaded_revision` has too.
ALTER TABLE integrations ADD COLUMN read_places jsonb;
ALTER TABLE integrations ADD COLUMN reloads boolean NOT NULL DEFAULT false;
ALTER TABLE integrations ADD COLUMN reloaded_revision bigint;
-- The transaction that recorded each change: a write's revision (its Coffer-Revision header) names all the changes
-- it committed together, which the barrier waits for.
ALTER TABLE change_log ADD COLUMN xact bigint NOT NULL DEFAULT txid_current();
