-- Up Migration

-- listOwnerships runs one index-ordered scan per requested state and merges them (src/store/lookups.ts).
-- With a repoRoot the existing ownerships_repo_state_idx serves each scan; without one, this index does.
-- ownership_id is the keyset tie-breaker, so it is part of the order (and makes the scan index-only).
CREATE INDEX ownerships_state_updated_idx ON ownerships (state, updated_at DESC, ownership_id DESC);

-- Abbreviated commit lookups (history by landedCommit, provenance) are prefix matches: LIKE 'abc1234%'
-- can use a btree only with pattern ops whatever the database collation is.
CREATE INDEX landing_receipts_head_prefix_idx ON landing_receipts (landed_head text_pattern_ops);

-- Down Migration
DROP INDEX landing_receipts_head_prefix_idx;
DROP INDEX ownerships_state_updated_idx;
