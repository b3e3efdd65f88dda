-- Audit log streams (issue 33, part 4). A stream follows its organization's audit rows from a durable cursor. The
-- cursor is a position (xact, sequence): the writing transaction (txid_current(), as change_log.xact) and an ordered
-- number taken at insert. Sequence numbers alone are not safe to follow: a transaction may take a lower number and
-- commit after a higher one has been read. A stream reads only rows of transactions older than every transaction still
-- running (below the snapshot's xmin): that set never grows again, so ordered by (xact, sequence) a cursor skips nothing.
ALTER TABLE audit_logs ADD COLUMN xact bigint NOT NULL DEFAULT txid_current();
ALTER TABLE audit_logs ADD COLUMN sequence bigint GENERATED ALWAYS AS IDENTITY;
CREATE INDEX audit_logs_stream_idx ON audit_logs (org_id, xact, sequence);

CREATE TABLE audit_log_streams (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  org_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  url text NOT NULL,
  -- the signing key and the extra headers ([{key, value}] JSON), sealed with the root key; never answered after creation
  encrypted_secret_key bytea NOT NULL,
  encrypted_headers bytea NOT NULL,
  header_keys text[] NOT NULL DEFAULT '{}',
  cursor_xact bigint NOT NULL,
  cursor_sequence bigint NOT NULL,
  last_delivered_id uuid,
  last_delivered_at timestamptz,
  consecutive_failures integer NOT NULL DEFAULT 0,
  last_error text,
  last_error_at timestamptz,
  next_attempt_at timestamptz NOT NULL DEFAULT now(),
  lease_until timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX audit_log_streams_org_idx ON audit_log_streams (org_id);
CREATE INDEX audit_log_streams_due_idx ON audit_log_streams (next_attempt_at);
