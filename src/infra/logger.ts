import pino, { type Logger } from 'pino';

/**
 * Structured logs. Paths that could carry secrets are redacted at the logger, so a careless call
 * site cannot leak a bearer token or cookie (spec §13).
 */
export function createLogger(level = 'info', destination?: pino.DestinationStream): Logger {
  return pino(
    {
      level,
      base: undefined,
      redact: {
        paths: ['req.headers.authorization', 'req.headers.cookie', 'headers.authorization', 'headers.cookie', 'authorization', 'cookie', 'token', '*.token'],
        censor: '[redacted]',
      },
    },
    destination,
  );
}
