import pino, { type Logger } from 'pino';
import type { Logger as TemporalLogger, LogLevel, LogMetadata } from '@temporalio/common';

/**
 * Structured logs. Paths that could carry secrets are redacted at the logger, so a careless call
 * site cannot leak a bearer token or cookie (docs/guarantees.md, "What is never stored").
 */
export function createLogger(level = 'info', destination?: pino.DestinationStream): Logger {
  return pino(
    {
      level,
      base: undefined,
      redact: {
        paths: [
          'req.headers.authorization',
          'req.headers.cookie',
          'headers.authorization',
          'headers.cookie',
          'authorization',
          'cookie',
          'token',
          '*.token',
          // A tenure proof (src/keys/tenure.ts) logged whole, or an answer or environment carrying it.
          'secret',
          '*.secret',
          '*.*.secret',
          'OVERDECK_TENURE_SECRET',
          '*.OVERDECK_TENURE_SECRET',
          '*.*.OVERDECK_TENURE_SECRET',
          '*.*.*.OVERDECK_TENURE_SECRET',
        ],
        censor: '[redacted]',
      },
    },
    destination,
  );
}

/**
 * Messages of the Temporal SDK that describe this project's intended set-up, not a problem:
 * the host agent is a worker with activities only, by design.
 */
const EXPECTED = [/^No workflows registered, not polling for workflow tasks/];

/**
 * The Temporal SDK's log (Runtime.install({ logger })) into ours: its INFO chatter (worker state
 * changes, bundle built) at debug, warnings and errors as warnings and errors, the expected ones
 * above at debug. One format and one level setting (LOG_LEVEL) for everything a process prints.
 */
export function temporalLogger(log: Logger): TemporalLogger {
  const out = (level: LogLevel, message: string, meta?: LogMetadata) => {
    const fields = { ...(meta ?? {}) } as Record<string, unknown>;
    const expected = EXPECTED.some((re) => re.test(message));
    if (level === 'ERROR') log.error(fields, message);
    else if (level === 'WARN' && !expected) log.warn(fields, message);
    else if (level === 'TRACE') log.trace(fields, message);
    else log.debug(fields, message);
  };
  return {
    log: out,
    trace: (m, meta) => out('TRACE', m, meta),
    debug: (m, meta) => out('DEBUG', m, meta),
    info: (m, meta) => out('INFO', m, meta),
    warn: (m, meta) => out('WARN', m, meta),
    error: (m, meta) => out('ERROR', m, meta),
  };
}
