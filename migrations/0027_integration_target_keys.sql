-- "Where it goes" for one key (issue 31, part 4): with each sync the operator of the Integration's own cluster reports
-- which keys its target holds and where each came from (a folder and a secret name), and which workloads of its
-- namespace read which of them. Names and kinds only, never a value; bounded by the wire (500 carried keys, 50
-- workloads, 50 keys each). A table of its own, not a column of integrations: the records are read whole by the
-- revision barrier and the destinations answer, and only the latter reads these, for the Integrations it answers.
CREATE TABLE integration_target_keys (
  integration_id uuid PRIMARY KEY REFERENCES integrations (id) ON DELETE CASCADE,
  report jsonb NOT NULL,
  updated_at timestamptz NOT NULL DEFAULT now()
);
