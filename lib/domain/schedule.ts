/**
 * Scheduled capacity: a pool's `min` raised for a while from each time a
 * cron expression matches, as EC2 Auto Scaling's scheduled actions and
 * Nomad's cron-based policies do ahead of known peaks. Cron is the usual
 * five fields (minute hour day-of-month month day-of-week), in UTC, with `*`,
 * lists, ranges and steps; day-of-week 0 or 7 is Sunday.
 */

export interface CapacitySchedule {
  /** e.g. `30 7 * * 1-5`: 07:30 UTC on weekdays. */
  cron: string;
  /** The pool's min while the schedule holds (at most the pool's max). */
  min: number;
  /** How long it holds after each start, in ms. */
  for: number;
}

/** Longest a schedule may hold: bounds the backward search for its last start. */
export const MAX_SCHEDULE_DURATION = 7 * 86_400_000;

const FIELDS = [
  { name: 'minute', min: 0, max: 59 },
  { name: 'hour', min: 0, max: 23 },
  { name: 'day of month', min: 1, max: 31 },
  { name: 'month', min: 1, max: 12 },
  { name: 'day of week', min: 0, max: 7 },
] as const;

export interface Cron {
  minutes: Set<number>;
  hours: Set<number>;
  days: Set<number>;
  months: Set<number>;
  weekdays: Set<number>;
  /** Cron's rule: when both day fields are restricted, a day matching either matches. */
  daysRestricted: boolean;
  weekdaysRestricted: boolean;
}

/** The parsed expression, or the problem with it as a sentence. */
export function parseCron(text: string): Cron | string {
  const parts = text.trim().split(/\s+/);
  if (parts.length !== 5) return `expected 5 fields (minute hour day-of-month month day-of-week), got ${parts.length}`;
  const sets: Set<number>[] = [];
  for (const [i, part] of parts.entries()) {
    const field = FIELDS[i]!;
    const set = new Set<number>();
    for (const item of part.split(',')) {
      const match = /^(\*|(\d+)(?:-(\d+))?)(?:\/(\d+))?$/.exec(item);
      if (!match) return `${field.name} ${JSON.stringify(item)}: expected *, N, N-M, or a step such as */15`;
      const from = match[1] === '*' ? field.min : Number(match[2]);
      const to = match[1] === '*' ? field.max : match[3] !== undefined ? Number(match[3]) : match[4] !== undefined ? field.max : from;
      const step = match[4] !== undefined ? Number(match[4]) : 1;
      if (from < field.min || to > field.max || from > to || step < 1) return `${field.name} ${JSON.stringify(item)}: out of range ${field.min}-${field.max}`;
      for (let v = from; v <= to; v += step) set.add(field.name === 'day of week' && v === 7 ? 0 : v);
    }
    sets.push(set);
  }
  return {
    minutes: sets[0]!,
    hours: sets[1]!,
    days: sets[2]!,
    months: sets[3]!,
    weekdays: sets[4]!,
    daysRestricted: parts[2] !== '*',
    weekdaysRestricted: parts[4] !== '*',
  };
}

export function cronMatches(cron: Cron, at: Date): boolean {
  if (!cron.minutes.has(at.getUTCMinutes()) || !cron.hours.has(at.getUTCHours()) || !cron.months.has(at.getUTCMonth() + 1)) return false;
  const day = cron.days.has(at.getUTCDate());
  const weekday = cron.weekdays.has(at.getUTCDay());
  if (cron.daysRestricted && cron.weekdaysRestricted) return day || weekday;
  return day && weekday;
}

/**
 * When the schedule holds at `now`: the ISO end of the window it is in (its
 * latest start within `duration` before now, plus `duration`); undefined when
 * it does not hold or its cron is invalid. Searches minute by minute back
 * from now, skipping hours and days that cannot match.
 */
export function scheduleActiveAt(schedule: CapacitySchedule, now: Date): string | undefined {
  const cron = parseCron(schedule.cron);
  if (typeof cron === 'string') return undefined;
  const duration = Math.min(schedule.for, MAX_SCHEDULE_DURATION);
  const earliest = now.getTime() - duration;
  let t = Math.floor(now.getTime() / 60_000) * 60_000;
  while (t > earliest) {
    const at = new Date(t);
    if (!cron.months.has(at.getUTCMonth() + 1) || !dayMatches(cron, at)) {
      t = Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), at.getUTCDate()) - 60_000;
      continue;
    }
    if (!cron.hours.has(at.getUTCHours())) {
      t = Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), at.getUTCDate(), at.getUTCHours()) - 60_000;
      continue;
    }
    if (cron.minutes.has(at.getUTCMinutes())) return new Date(t + duration).toISOString();
    t -= 60_000;
  }
  return undefined;
}

function dayMatches(cron: Cron, at: Date): boolean {
  const day = cron.days.has(at.getUTCDate());
  const weekday = cron.weekdays.has(at.getUTCDay());
  return cron.daysRestricted && cron.weekdaysRestricted ? day || weekday : day && weekday;
}

/**
 * The first minute strictly after `after` (epoch ms) at which `cronText`
 * matches, within `horizonMs`; undefined when none does (or the cron is
 * invalid). Skips days and hours that cannot match, as scheduleActiveAt does.
 */
export function nextCronMatch(cronText: string, after: number, horizonMs: number = MAX_SCHEDULE_DURATION + 86_400_000): number | undefined {
  const cron = parseCron(cronText);
  if (typeof cron === 'string') return undefined;
  const latest = after + horizonMs;
  let t = Math.floor(after / 60_000) * 60_000 + 60_000;
  while (t <= latest) {
    const at = new Date(t);
    if (!cron.months.has(at.getUTCMonth() + 1) || !dayMatches(cron, at)) {
      t = Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), at.getUTCDate() + 1);
      continue;
    }
    if (!cron.hours.has(at.getUTCHours())) {
      t = Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), at.getUTCDate(), at.getUTCHours() + 1);
      continue;
    }
    if (cron.minutes.has(at.getUTCMinutes())) return t;
    t += 60_000;
  }
  return undefined;
}
