/**
 * What the CLI's commands share: the process they run in (`Io`), the parsed
 * options, and printing (JSON with --json, else text lines).
 */
import type { CliEnvironment } from '../config/index.js';
import { usageError } from './exit.js';
import type { Style } from './render.js';

export const OPTIONS = {
  local: { type: 'boolean' },
  'state-dir': { type: 'string' },
  stage: { type: 'string' },
  region: { type: 'string' },
  table: { type: 'string' },
  config: { type: 'string' },
  at: { type: 'string' },
  json: { type: 'boolean' },
  color: { type: 'boolean' },
  'no-color': { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
  version: { type: 'boolean' },
  watch: { type: 'boolean', short: 'w' },
  interval: { type: 'string' },
  iterations: { type: 'string' },
  all: { type: 'boolean' },
  limit: { type: 'string' },
  'dry-run': { type: 'boolean' },
  reason: { type: 'string' },
  pool: { type: 'string' },
  'scale-up': { type: 'boolean' },
  'scale-down': { type: 'boolean' },
  until: { type: 'string' },
  since: { type: 'string' },
  app: { type: 'string' },
  replace: { type: 'boolean' },
} as const;

export type OptionName = keyof typeof OPTIONS;

export interface Io {
  stdout: { write(text: string): unknown; isTTY?: boolean; columns?: number };
  stderr: { write(text: string): unknown; isTTY?: boolean };
  cwd: string;
  /** The repository: default state directory and configuration files resolve against it. */
  root: string;
  env: CliEnvironment;
  /** Waits between refreshes of --watch; resolves early (false) when interrupted. */
  sleep?: (ms: number) => Promise<boolean>;
}

export type Values = { [K in OptionName]?: (typeof OPTIONS)[K]['type'] extends 'boolean' ? boolean : string };


export interface Context {
  io: Io;
  values: Values;
  style: Style;
  width?: number;
}


/** JSON (`--json`) or the text lines. */
export function print(context: Context, value: unknown, text: () => string[]): void {
  if (context.values.json) context.io.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
  else context.io.stdout.write(`${text().join('\n')}\n`);
}


/** The terminal's width; COLUMNS when stdout is not a terminal; unlimited otherwise (pipes keep whole lines). */
export function widthOf(io: Io): number | undefined {
  if (io.stdout.isTTY && io.stdout.columns) return io.stdout.columns;
  return io.env.columns;
}

export function positiveInt(text: string | undefined, flag: string, fallback: number): number {
  if (text === undefined) return fallback;
  if (!/^\d+$/.test(text) || Number(text) < 1) throw usageError(`${flag} ${JSON.stringify(text)}: expected a whole number of at least 1`);
  return Number(text);
}

