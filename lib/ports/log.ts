export type LogAttributes = Record<string, unknown>;

/**
 * Structured logging (JSON lines in CloudWatch when deployed,
 * lib/adapters/lambda/logger.ts). Never throws. Attributes carry the correlation ids
 * (decisionId, drainId, nodeId, pool) that operators search by.
 */
export interface Log {
  debug(message: string, attributes?: LogAttributes): void;
  info(message: string, attributes?: LogAttributes): void;
  warn(message: string, attributes?: LogAttributes): void;
  error(message: string, attributes?: LogAttributes): void;
}
