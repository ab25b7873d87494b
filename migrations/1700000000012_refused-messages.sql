-- Up Migration

-- Messages an ownership refused because no service process sealed them (a raw Temporal client
-- naming a principal it is not, a captured message sent again): recorded for people to see in
-- `history`, beside the events. Nothing here is believed: claimed_principal is what the message
-- said. Append-only, as the log.
CREATE TABLE refused_messages (
  id                 bigserial   PRIMARY KEY,
  ownership_id       text        NOT NULL,
  workflow_id        text        NOT NULL,
  run_id             text        NOT NULL,
  message            text        NOT NULL,
  message_id         text,
  code               text        NOT NULL,
  problem            text        NOT NULL,
  claimed_principal  text,
  received_at        timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX refused_messages_ownership_idx ON refused_messages (ownership_id, id);

CREATE TRIGGER refused_messages_no_update BEFORE UPDATE OR DELETE ON refused_messages
  FOR EACH ROW EXECUTE FUNCTION ownership_events_append_only();

-- Down Migration
DROP TABLE refused_messages;
