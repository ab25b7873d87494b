-- Up Migration

-- One judge (docs/architecture.md#one-judge): Temporal's update decides a message, its update id is
-- the message id, and the workflow answers a retried id itself (within a run, and across
-- continue-as-new from the events and refusals it carries). PostgreSQL records what the workflow
-- decided; it no longer settles outcomes of its own, nor refuses a second event of one message
-- (a retry older than what the run carries is a new decision, and its events are recorded as such).
DROP TABLE message_outcomes;
DROP INDEX ownership_events_message_idx;

-- Down Migration
CREATE UNIQUE INDEX ownership_events_message_idx ON ownership_events (ownership_id, message_id, type) WHERE message_id IS NOT NULL;
CREATE TABLE message_outcomes (
  message_id    text        PRIMARY KEY,
  ownership_id  text,
  outcome       text        NOT NULL CHECK (outcome IN ('applied', 'refused')),
  first_seq     integer     CHECK ((outcome = 'applied') = (first_seq IS NOT NULL)),
  CHECK (outcome = 'refused' OR ownership_id IS NOT NULL),
  code          text,
  settled_at    timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX message_outcomes_ownership_idx ON message_outcomes (ownership_id);
CREATE TRIGGER message_outcomes_no_update BEFORE UPDATE OR DELETE ON message_outcomes
  FOR EACH ROW EXECUTE FUNCTION ownership_events_append_only();
