/**
 * The settings of an ownership workflow and how each applies (src/domain/attributes.ts, "ownership
 * settings"). Their home is the deployment's configuration (src/config.ts, the ENV rows that name a
 * setting); a lifecycle starts with the settings its starter gives, and every continue-as-new
 * takes the configuration of the worker that runs it again (nextRunSettings), so a running
 * ownership follows a changed configuration from its next run on. What must not move under a
 * tenure is not a setting but state: the lease a tenure began with (liveness.leaseTtlMs) and the
 * expiry a handoff was offered with (record.handoff.expiresAt). Pure and stateless: preloaded.
 */

export interface OwnershipSettings {
  leaseTtlMs: number;
  heartbeatLogIntervalMs: number;
  handoffTimeoutMs: number;
  maxHistoryEvents: number;
  /** Temporal caps updates per execution; continue-as-new well before that. */
  maxUpdatesPerRun: number;
  /** How long owner-changing updates wait for the worktree's local projection before answering. */
  projectionWaitMs: number;
}

export const DEFAULT_SETTINGS: OwnershipSettings = {
  leaseTtlMs: 60_000,
  heartbeatLogIntervalMs: 300_000,
  handoffTimeoutMs: 600_000,
  maxHistoryEvents: 2_000,
  maxUpdatesPerRun: 1_000,
  projectionWaitMs: 10_000,
};

/** What follows configuration, and what a change of it touches. */
export const SETTING_SCOPE: Readonly<Record<keyof OwnershipSettings, string>> = {
  leaseTtlMs: 'configuration (OD_LEASE_TTL_MS): the lease of each new tenure that names none; a tenure keeps the lease it began with',
  heartbeatLogIntervalMs: 'configuration (OD_HEARTBEAT_LOG_INTERVAL_MS): from the next run on',
  handoffTimeoutMs: 'configuration (OD_HANDOFF_TIMEOUT_MS): each new handoff; a pending one keeps the expiry it was offered with',
  maxHistoryEvents: 'configuration (OD_MAX_HISTORY_EVENTS): from the next run on',
  maxUpdatesPerRun: "code: held under Temporal's per-run update limit, not configurable",
  projectionWaitMs: "code: the drain before continue-as-new waits this long for the worktree's projection",
};

/**
 * The next run's settings: the worker's configuration where it has one (a deployment's worker
 * always does), else the lifecycle's own (embedders and tests that start workers without one).
 */
export function nextRunSettings(current: OwnershipSettings, configured: Partial<OwnershipSettings> | null): OwnershipSettings {
  return configured === null ? current : { ...current, ...configured };
}
