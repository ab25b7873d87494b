-- Up Migration

-- The branch head of each owned worktree as it moves (docs/git-projection.md#the-journal): the
-- host agent ships each journaled ref move and then records the branch's HEAD and ahead/behind
-- here, so `who` and `list` show a commit made a second ago, not the head of the last projection
-- write. Observability, not history: one row per ownership, overwritten.
CREATE TABLE worktree_heads (
  ownership_id  text        PRIMARY KEY,
  worktree_path text        NOT NULL,
  status        jsonb       NOT NULL,
  seen_at       timestamptz NOT NULL DEFAULT now()
);

-- Down Migration
DROP TABLE worktree_heads;
