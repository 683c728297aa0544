import { Logger } from '@aws-lambda-powertools/logger';

/** The levels a function may log at; `SILENT` turns logging off (tests). */
export type LogLevelName = 'TRACE' | 'DEBUG' | 'INFO' | 'WARN' | 'ERROR' | 'CRITICAL' | 'SILENT';

/**
 * A Powertools `Logger` for one function: one JSON object per line, with
 * `level`, `message`, `service`, `timestamp` and, once `addContext` ran, the
 * Lambda request id. The level comes from the caller (from configuration);
 * Powertools may still apply its own variables (`POWERTOOLS_LOG_LEVEL`, and
 * Lambda's advanced logging controls, which win).
 */
export function createLogger(serviceName: string, logLevel: LogLevelName = 'INFO'): Logger {
  return new Logger({ serviceName, logLevel });
}
