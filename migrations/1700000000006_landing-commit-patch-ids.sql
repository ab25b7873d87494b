-- Up Migration

-- provenance of a rebased or cherry-picked copy finds its original's landing by patch-id (src/store/provenance.ts)
CREATE INDEX landing_commits_patch_idx ON landing_commits (patch_id) WHERE patch_id IS NOT NULL;

-- Down Migration
DROP INDEX landing_commits_patch_idx;
