/**
 * gRPC channel settings for every client connection to Temporal. grpc-js backs off reconnects up
 * to 120 s by default, so after a two-minute Temporal outage the API kept answering 503 for about
 * a minute more; a 5 s cap bounds that to one Retry-After.
 */
export const TEMPORAL_CHANNEL_ARGS = {
  'grpc.max_reconnect_backoff_ms': 5_000,
  'grpc.initial_reconnect_backoff_ms': 250,
} as const;
