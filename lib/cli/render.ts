/**
 * Text output of the CLI: colour only when asked for (a terminal, and no
 * NO_COLOR), tables that fit the terminal's width, prose wrapped to it, and
 * times as operators read them (`10:05:00Z (in 4m)`).
 */
import { formatDuration } from '../domain/duration.js';
import type { NodeState } from '../domain/model.js';

const ANSI = /\u001b\[[0-9;]*m/g;

/** Length on screen: escape sequences take no room. */
export function visibleLength(text: string): number {
  return text.replace(ANSI, '').length;
}

export class Style {
  constructor(readonly enabled: boolean) {}

  private wrap(open: number, close: number, text: string): string {
    return this.enabled && text !== '' ? `\u001b[${open}m${text}\u001b[${close}m` : text;
  }
  bold(text: string): string {
    return this.wrap(1, 22, text);
  }
  dim(text: string): string {
    return this.wrap(2, 22, text);
  }
  red(text: string): string {
    return this.wrap(31, 39, text);
  }
  green(text: string): string {
    return this.wrap(32, 39, text);
  }
  yellow(text: string): string {
    return this.wrap(33, 39, text);
  }
  cyan(text: string): string {
    return this.wrap(36, 39, text);
  }
  /** A node state in the colour of its health. */
  state(state: NodeState | string): string {
    return this.paintState(state, state);
  }
  /** `text` in the colour of a node state's health. */
  paintState(state: NodeState | string, text: string): string {
    switch (state) {
      case 'active':
        return this.green(text);
      case 'provisioning':
      case 'draining':
      case 'drained':
      case 'terminating':
        return this.yellow(text);
      case 'failed':
      case 'lost':
        return this.red(text);
      default:
        return this.dim(text);
    }
  }
  /** ✓ / ✗ for a check. */
  mark(ok: boolean): string {
    return ok ? this.green('✓') : this.red('✗');
  }
}

export interface Column {
  header: string;
  align?: 'left' | 'right';
  /** Shrinks (its cells cut with `…`) when the table is wider than the terminal; the last column is flexible when none is marked. */
  flex?: boolean;
  /** Cut only when nothing else can give up room (the column an operator copies from, such as NODE). */
  keep?: boolean;
}

/** A cell: its text, and a colour applied after any cut (so a cut never breaks an escape sequence). */
export type Cell = string | { text: string; paint?: (text: string) => string };

const GAP = 2;
const MIN_FLEX = 8;

/**
 * Lines of a table whose width fits `width` (unlimited when undefined):
 * flexible columns shrink first, then the widest others down to their
 * header, then flexible ones down to theirs, and `keep` columns last; a cut
 * cell ends with `…`.
 */
export function renderTable(columns: readonly Column[], rows: readonly (readonly Cell[])[], width?: number): string[] {
  const text = (cell: Cell | undefined) => (cell === undefined ? '' : typeof cell === 'string' ? cell : cell.text).replace(/\s+/g, ' ');
  const widths = columns.map((column, i) => Math.max(column.header.length, ...rows.map((row) => text(row[i]).length)));
  if (width !== undefined) {
    const total = () => widths.reduce((sum, w) => sum + w, 0) + GAP * (columns.length - 1);
    const flexible = columns.some((c) => c.flex) ? columns.map((c) => c.flex === true) : columns.map((_, i) => i === columns.length - 1);
    // Flexible columns give up room first, the widest first, down to MIN_FLEX (or their header).
    shrink(widths, flexible, () => MIN_FLEX, () => total() - width);
    const floor = (i: number) => Math.max(3, columns[i]!.header.length);
    // Then the others but the kept ones, down to their header; then the flexible ones down to theirs.
    shrink(widths, columns.map((c) => c.keep !== true), floor, () => total() - width);
    shrink(widths, flexible, floor, () => total() - width);
    // The kept columns last.
    shrink(widths, columns.map(() => true), floor, () => total() - width);
  }
  const line = (cells: readonly Cell[], header: boolean) =>
    columns
      .map((column, i) => {
        const cell = cells[i];
        const raw = header ? column.header : text(cell);
        const cut = cutTo(raw, widths[i]!);
        const pad = ' '.repeat(Math.max(0, widths[i]! - cut.length));
        const painted = typeof cell === 'object' && cell.paint && !header ? cell.paint(cut) : cut;
        return column.align === 'right' ? pad + painted : i === columns.length - 1 ? painted : painted + pad;
      })
      .join(' '.repeat(GAP))
      .replace(/\s+$/, '');
  return [line(columns.map((c) => c.header), true), ...rows.map((row) => line(row, false))];
}

function shrink(widths: number[], which: readonly boolean[], floor: (i: number) => number, excess: () => number): void {
  while (excess() > 0) {
    let widest = -1;
    for (let i = 0; i < widths.length; i++) {
      if (!which[i] || widths[i]! <= floor(i)) continue;
      if (widest < 0 || widths[i]! > widths[widest]!) widest = i;
    }
    if (widest < 0) return;
    widths[widest] = Math.max(floor(widest), widths[widest]! - Math.min(excess(), Math.max(1, widths[widest]! - floor(widest))));
  }
}

/** `text` cut to `width` characters, ending with `…` when cut. */
export function cutTo(text: string, width: number): string {
  if (text.length <= width) return text;
  if (width <= 1) return text.slice(0, width);
  return `${text.slice(0, width - 1)}…`;
}

/**
 * Prose wrapped at spaces to `width` (unlimited when undefined): the first
 * line starts with `prefix`, the others with as many spaces. A word longer
 * than a line is cut into pieces.
 */
export function wrap(text: string, width: number | undefined, prefix = ''): string[] {
  const hang = ' '.repeat(visibleLength(prefix));
  if (width === undefined || width - hang.length < 20) return [`${prefix}${text}`];
  const room = width - hang.length;
  const lines: string[] = [];
  let current = '';
  for (const word of text.split(/\s+/).filter(Boolean)) {
    if (current === '') current = word;
    else if (visibleLength(current) + 1 + visibleLength(word) <= room) current += ` ${word}`;
    else {
      lines.push(current);
      current = word;
    }
    while (current.length > room && !current.includes('\u001b')) {
      lines.push(current.slice(0, room));
      current = current.slice(room);
    }
  }
  lines.push(current);
  return lines.map((line, i) => `${i === 0 ? prefix : hang}${line}`);
}

/** A time as operators read it: `10:05:00Z` on the same UTC day as `now`, else `2026-11-20 10:05:00Z`. */
export function clockTime(iso: string | undefined, now: Date): string {
  if (iso === undefined) return '-';
  const ms = Date.parse(iso);
  if (!Number.isFinite(ms)) return iso;
  const text = new Date(ms).toISOString();
  return text.slice(0, 10) === now.toISOString().slice(0, 10) ? `${text.slice(11, 19)}Z` : `${text.slice(0, 10)} ${text.slice(11, 19)}Z`;
}

/** `4m` / `1h2m` between two instants, to the second. */
export function span(ms: number): string {
  return formatDuration(Math.max(0, Math.round(Math.abs(ms) / 1000) * 1000));
}

/** `10:05:00Z (in 4m)` or `10:01:00Z (6m ago)`. */
export function when(iso: string | undefined, now: Date): string {
  if (iso === undefined) return '-';
  const ms = Date.parse(iso);
  if (!Number.isFinite(ms)) return iso;
  const delta = ms - now.getTime();
  const relative = Math.abs(delta) < 1000 ? 'now' : delta > 0 ? `in ${span(delta)}` : `${span(delta)} ago`;
  return `${clockTime(iso, now)} (${relative})`;
}

/** A utilization as a ratio with two decimals; `inf` for demand without capacity. */
export function ratio(value: number | null | undefined): string {
  if (value === null || value === undefined) return 'inf';
  return Number.isFinite(value) ? value.toFixed(2) : 'inf';
}

export function plural(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? '' : 's'}`;
}
