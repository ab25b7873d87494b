import type { Pool } from 'pg';

/** An executor principal: its bearer token acts for exactly one agent worker. */
export interface ExecutorToken {
  workerId: string;
  token: string;
}

/**
 * What a torture run is pointed at: a listening API on a real worker/Temporal/PostgreSQL, its
 * principals (tokens stay in memory; they are never recorded), the database the checker reads and
 * a directory under the API's allowed roots for the run's repositories.
 */
export interface Target {
  url: string;
  pool: Pool;
  /** the host id the API binds worktrees on (the worker's host agent serves it) */
  hostId: string;
  baseDir: string;
  admin: string;
  landing: string;
  reader: string;
  executors: ExecutorToken[];
}
