-- Up Migration

-- Recorded overrides (od-worktree override): a person stepped into an owned worktree with the
-- current owner's tenure, saying why. Written before the API answers with the tenure, so no
-- override goes unrecorded; shown in `history` beside the events. The tenure secret is never
-- here: only the tenure's epoch. Append-only, as the log.
CREATE TABLE overrides (
  id            text        PRIMARY KEY,
  ownership_id  text        NOT NULL,
  epoch         integer     NOT NULL,
  principal     text        NOT NULL,
  reason        text        NOT NULL,
  at            timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX overrides_ownership_idx ON overrides (ownership_id, at);

CREATE TRIGGER overrides_no_update BEFORE UPDATE OR DELETE ON overrides
  FOR EACH ROW EXECUTE FUNCTION ownership_events_append_only();

-- Down Migration
DROP TABLE overrides;
