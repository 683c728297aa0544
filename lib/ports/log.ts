export type LogAttributes = Record<string, unknown>;

/**
 * Structured logging (Powertools Logger when deployed: JSON lines in
 * CloudWatch). Never throws. Attributes carry the correlation ids
 * (decisionId, drainId, nodeId, pool) that operators search by.
 */
export interface Log {
  debug(message: string, attributes?: LogAttributes): void;
  info(message: string, attributes?: LogAttributes): void;
  warn(message: string, attributes?: LogAttributes): void;
  error(message: string, attributes?: LogAttributes): void;
}

/** Keeps log lines in memory: for tests and the local runtime. */
export class MemoryLog implements Log {
  readonly lines: Array<{ level: 'debug' | 'info' | 'warn' | 'error'; message: string; attributes: LogAttributes }> = [];

  debug(message: string, attributes: LogAttributes = {}): void {
    this.lines.push({ level: 'debug', message, attributes });
  }
  info(message: string, attributes: LogAttributes = {}): void {
    this.lines.push({ level: 'info', message, attributes });
  }
  warn(message: string, attributes: LogAttributes = {}): void {
    this.lines.push({ level: 'warn', message, attributes });
  }
  error(message: string, attributes: LogAttributes = {}): void {
    this.lines.push({ level: 'error', message, attributes });
  }
}
