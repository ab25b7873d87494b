-- Up Migration

-- Every message that decides events carries an id (the API's idempotency key, or Temporal's
-- update id); its events record it. One message never has two events of one type, whoever
-- retries it, whichever workflow task re-runs it: the log itself refuses the second.
ALTER TABLE ownership_events ADD COLUMN message_id text;
CREATE UNIQUE INDEX ownership_events_message_idx ON ownership_events (ownership_id, message_id, type) WHERE message_id IS NOT NULL;

-- The outcome of each message, settled once: 'applied' (its events are in the log from first_seq)
-- or 'refused' (the API answered it with a refusal or gave up on it: it never takes effect, and
-- a workflow task that decided it later finds it refused here instead of writing its events).
-- The primary key is what makes "answered 409, yet in the log" impossible.
CREATE TABLE message_outcomes (
  message_id    text        PRIMARY KEY,
  -- null for a refused bind that named no ownership yet
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

-- Down Migration
DROP TABLE message_outcomes;
DROP INDEX ownership_events_message_idx;
ALTER TABLE ownership_events DROP COLUMN message_id;
