import { readFileSync } from 'node:fs';
import { ValidationError } from '../errors.js';
import type { AppMix } from './disruption.js';

export interface TraceOptions {
  timeColumn?: string;
  demandColumn?: string;
  /** Seconds between rows when there is no time column. */
  stepSeconds: number;
  /** Demand is scaled so that its maximum equals this many gears. */
  peakGears: number;
}

export interface TraceStep {
  /** Seconds from the start of the trace. */
  at: number;
  /** Gears wanted during this step. */
  demand: number;
}

export interface Trace {
  source: string;
  timeColumn?: string;
  demandColumn: string;
  steps: TraceStep[];
  /** Seconds between consecutive rows (the last row lasts this long too). */
  stepSeconds: number;
  durationSeconds: number;
  /** ISO date-time of the first row, when the time column holds date-times (not plain seconds). */
  startsAt?: string;
  /** Share of the gears deleted and replaced by new ones each hour, beyond the demand's net change (lib/sim/churn.ts); none when unset. */
  churnPerHour?: number;
  /** Who the gears belong to (idle share, application sizes: lib/sim/disruption.ts); the default mix when unset. */
  apps?: AppMix;
}

const TIME_COLUMNS = ['timestamp', 'time', 'datetime', 'date', 'ts', 't', 'seconds', 'second', 'epoch'];

/**
 * Reads a CSV workload trace: one row per time step, a time column (seconds,
 * or date-times) or rows `stepSeconds` apart, and a demand column scaled so
 * its peak is `peakGears` gears.
 */
export function readTrace(path: string, options: TraceOptions): Trace {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new ValidationError({ path: 'trace', message: `cannot read trace: ${(error as Error).message}`, value: path });
  }
  return parseTrace(text, path, options);
}

export function parseTrace(text: string, source: string, options: TraceOptions): Trace {
  const lines = text.split(/\r?\n/).filter((line) => line.trim() !== '');
  if (lines.length < 2) throw new ValidationError({ path: 'trace', message: 'needs a header row and at least one data row', value: source });
  const header = splitRow(lines[0]!);
  const column = (name: string, option: string) => {
    const index = header.indexOf(name);
    if (index < 0) throw new ValidationError({ path: option, message: `no such column in ${source}; columns: ${header.join(', ')}`, value: name });
    return index;
  };
  const timeColumn = options.timeColumn ?? header.find((name) => TIME_COLUMNS.includes(name.toLowerCase()));
  const timeIndex = timeColumn === undefined ? -1 : column(timeColumn, '--time-column');
  const demandColumn = options.demandColumn ?? header.find((_, i) => i !== timeIndex);
  if (demandColumn === undefined) throw new ValidationError({ path: '--demand-column', message: `${source} has no demand column` });
  const demandIndex = column(demandColumn, '--demand-column');

  const raw: Array<{ at: number; value: number }> = [];
  let origin: number | undefined;
  let dated = false;
  lines.slice(1).forEach((line, row) => {
    const cells = splitRow(line);
    const value = Number(cells[demandIndex]);
    if (!Number.isFinite(value) || value < 0) {
      throw new ValidationError({ path: `row ${row + 2}.${demandColumn}`, message: 'expected a non-negative number', value: cells[demandIndex] });
    }
    let at = row * options.stepSeconds;
    if (timeIndex >= 0) {
      const seconds = toSeconds(cells[timeIndex]);
      if (seconds === undefined) {
        throw new ValidationError({ path: `row ${row + 2}.${timeColumn}`, message: 'expected seconds or a date-time', value: cells[timeIndex] });
      }
      if (origin === undefined) {
        origin = seconds;
        dated = !Number.isFinite(Number(cells[timeIndex]));
      }
      at = seconds - origin;
    }
    raw.push({ at, value });
  });
  raw.sort((a, b) => a.at - b.at);
  let peak = 0;
  for (const r of raw) if (r.value > peak) peak = r.value;
  const scale = peak > 0 ? options.peakGears / peak : 0;
  const steps = raw.map((r) => ({ at: r.at, demand: Math.round(r.value * scale) }));
  const stepSeconds = steps.length > 1 ? medianGap(steps) : options.stepSeconds;
  const trace: Trace = {
    source,
    demandColumn,
    steps,
    stepSeconds,
    durationSeconds: steps[steps.length - 1]!.at + stepSeconds,
  };
  if (timeColumn !== undefined) trace.timeColumn = timeColumn;
  if (dated && origin !== undefined) trace.startsAt = new Date(origin * 1000).toISOString();
  return trace;
}

/** The largest demand of the trace (a loop: spreading 130,000 rows into Math.max overflows the stack). */
export function peakDemand(trace: Pick<Trace, 'steps'>): number {
  let peak = 0;
  for (const step of trace.steps) if (step.demand > peak) peak = step.demand;
  return peak;
}

/** Demand at `seconds` from the start: the row in force then. */
export function demandAt(trace: Trace, seconds: number, hint = 0): { demand: number; index: number } {
  let index = Math.min(hint, trace.steps.length - 1);
  while (index + 1 < trace.steps.length && trace.steps[index + 1]!.at <= seconds) index++;
  return { demand: trace.steps[index]!.demand, index };
}

function splitRow(line: string): string[] {
  return line.split(',').map((cell) => cell.trim().replace(/^"(.*)"$/, '$1'));
}

function toSeconds(cell: string | undefined): number | undefined {
  if (cell === undefined || cell === '') return undefined;
  const number = Number(cell);
  if (Number.isFinite(number)) return number;
  const ms = Date.parse(cell);
  return Number.isFinite(ms) ? ms / 1000 : undefined;
}

function medianGap(steps: readonly TraceStep[]): number {
  const gaps = steps
    .slice(1)
    .map((step, i) => step.at - steps[i]!.at)
    .filter((gap) => gap > 0)
    .sort((a, b) => a - b);
  return gaps[Math.floor(gaps.length / 2)] ?? 1;
}
