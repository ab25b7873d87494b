/**
 * The owner's last activity, as every reader shows it (src/domain/attributes.ts, "last activity of
 * the owner"): the live workflow hears every heartbeat (`liveness.lastHeartbeatAt`); the durable
 * record's `lastSeenAt` has the owner's events but heartbeats at most once per log interval, and is
 * all there is once the workflow is gone. The later of the two, decided here only.
 */
export function lastActivityAt(record: { lastSeenAt: string | null }, liveness: { lastHeartbeatAt: string | null } | null | undefined): string | null {
  const seen = record.lastSeenAt;
  const heard = liveness?.lastHeartbeatAt ?? null;
  if (!seen) return heard;
  if (!heard) return seen;
  return Date.parse(seen) >= Date.parse(heard) ? seen : heard;
}
