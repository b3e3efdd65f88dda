-- Failed logins per credential (universal-auth client id, email) and per source address, shared by
-- every replica. `key` is '<scope>:<sha256 of the subject>' (no email or client id in clear).
CREATE TABLE login_throttles (
  key text PRIMARY KEY,
  -- failures since window_started_at
  failures integer NOT NULL DEFAULT 0,
  window_started_at timestamptz NOT NULL,
  -- lockouts so far; each one lasts twice as long as the one before (up to a maximum)
  lockouts integer NOT NULL DEFAULT 0,
  locked_until timestamptz,
  last_failure_at timestamptz NOT NULL
);
CREATE INDEX login_throttles_last_failure_idx ON login_throttles (last_failure_at);
