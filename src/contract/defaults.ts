/**
 * Defaults that a client and the service must agree on without configuration. No imports: the
 * CLI's HTTP client loads this on its start-up path.
 */

/** The port `npm start` serves the HTTP API (and MCP endpoint) on: the service's OD_API_PORT default, the clients' default URL. */
export const DEFAULT_API_PORT = 8787;
