-- One version per in-process cache of per-request look-ups (src/caches/cache-policies.ts): the transaction that writes
-- a table a cache is read from moves the cache's version before it commits, and every process compares the version
-- it kept an entry under with the one it reads here (src/caches/README.md). A missing row counts as version 0.
CREATE TABLE cache_versions (
  name text PRIMARY KEY,
  version bigint NOT NULL
);
