import type { Log, LogAttributes } from '../../ports/log.js';

/** Keeps log lines in memory: the local runtime, the CLI's in-process use cases, tests. */
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
