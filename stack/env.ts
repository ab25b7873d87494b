/** The workflow settings a run's service processes start with (OD_* variables). */
export interface ServiceSettings {
  leaseTtlMs: number;
  heartbeatLogIntervalMs: number;
  handoffTimeoutMs: number;
}

export interface ServiceEnvOptions {
  temporalAddress: string;
  taskQueue: string;
  databaseUrl: string;
  /** the principals file (hashes only): the only principals; OD_TOKENS is emptied */
  tokensFile: string;
  /** OD_LIVENESS_AUTHORITY: none (a silent owner never goes stale) or local (this host's process table) */
  liveness: 'none' | 'local';
  settings: ServiceSettings;
}

/**
 * The environment of a run's service process (worker, host agent, API) or of a CLI run against it
 * (src/config.ts variables); `extra` names what differs per process (host id, roots, ports).
 */
export function serviceEnv(o: ServiceEnvOptions, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    TEMPORAL_ADDRESS: o.temporalAddress,
    TEMPORAL_NAMESPACE: 'default',
    TEMPORAL_TASK_QUEUE: o.taskQueue,
    DATABASE_URL: o.databaseUrl,
    OD_TOKENS_FILE: o.tokensFile,
    OD_TOKENS: '',
    OD_LIVENESS_AUTHORITY: o.liveness,
    OD_LEASE_TTL_MS: String(o.settings.leaseTtlMs),
    OD_HEARTBEAT_LOG_INTERVAL_MS: String(o.settings.heartbeatLogIntervalMs),
    OD_HANDOFF_TIMEOUT_MS: String(o.settings.handoffTimeoutMs),
    LOG_LEVEL: 'info',
    ...extra,
  };
  return withoutTestStack(env);
}

/** A run's service environment: a jest or CI environment must not leak its own stack's settings into it. */
export function withoutTestStack(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  delete env.OD_TEST_DATABASE_URL;
  delete env.OD_TEST_WORKFLOW_BUNDLE;
  return env;
}
