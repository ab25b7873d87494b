-- Up Migration

-- One row per worker process, beaten every few seconds while its workers run: /healthz tells a
-- dead or frozen worker (or host agent) within seconds, where Temporal's poller list keeps a
-- poller for a minute or more after its process died. Operational state, not history: rows are
-- overwritten in place and old ones deleted.
CREATE TABLE worker_beacons (
  process_id text PRIMARY KEY,
  task_queue text NOT NULL,
  host_id text NOT NULL,
  serves_workflows boolean NOT NULL,
  started_at timestamptz NOT NULL,
  beat_at timestamptz NOT NULL
);
CREATE INDEX worker_beacons_task_queue ON worker_beacons (task_queue, beat_at);
CREATE INDEX worker_beacons_host ON worker_beacons (host_id, beat_at);

-- Down Migration
DROP TABLE worker_beacons;
