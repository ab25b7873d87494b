import { Counter, Histogram, type Registry } from 'prom-client';

/** Prometheus metrics of the API and the MCP tools: per route (its pattern, never the raw URL) and reason code. */
export interface ApiMetrics {
  requests: Counter<'method' | 'route' | 'status' | 'code'>;
  duration: Histogram<'method' | 'route'>;
  toolCalls: Counter<'tool' | 'code'>;
}

export function createMetrics(registry: Registry): ApiMetrics {
  const existing = (name: string) => registry.getSingleMetric(name);
  return {
    requests:
      (existing('od_api_requests_total') as Counter<'method' | 'route' | 'status' | 'code'> | undefined) ??
      new Counter({
        name: 'od_api_requests_total',
        help: 'HTTP requests by route pattern, status and reason code (ok on success)',
        labelNames: ['method', 'route', 'status', 'code'],
        registers: [registry],
      }),
    duration:
      (existing('od_api_request_duration_seconds') as Histogram<'method' | 'route'> | undefined) ??
      new Histogram({
        name: 'od_api_request_duration_seconds',
        help: 'HTTP request duration by route pattern',
        labelNames: ['method', 'route'],
        buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
        registers: [registry],
      }),
    toolCalls:
      (existing('od_mcp_tool_calls_total') as Counter<'tool' | 'code'> | undefined) ??
      new Counter({
        name: 'od_mcp_tool_calls_total',
        help: 'MCP tool calls by tool and reason code (ok on success)',
        labelNames: ['tool', 'code'],
        registers: [registry],
      }),
  };
}
