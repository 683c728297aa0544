/**
 * When demand outruns the boot delay. The evaluator sees only the gears that
 * found a slot: gears that wait for one (a full district refuses them) are
 * reported by no node, so a full pool's demand is a lower bound, and a
 * scale-up sized to it adds a node or two per boot while hundreds of gears
 * wait (a 5x burst took 13 boots of +1 node). Cluster-autoscaler sizes for
 * the pending pods it can count; nodescaler cannot count, so it ramps: a pool
 * that is full again once the nodes of a scale-up decided while it was full
 * have joined (every slot they brought was taken at once) doubles, and keeps
 * doubling while that repeats. Pure functions of data.
 */
import type { PoolRecord } from './model.js';
import { formatDuration } from './duration.js';

/** A full pool is full "again" when its last full-pool scale-up was at most this many boot delays ago. */
export const OUTRAN_WINDOW_BOOTS = 3;

export interface OutranRamp {
  /** 0: the pool has free slots; 1: full for the first time; 2, 3, ...: full again after that many full-pool scale-ups. */
  round: number;
  /** Nodes the ramp asks for at least (0 when not ramping): the pool's own size, so it doubles. */
  minNodes: number;
  /** The pool keeps this full-pool scale-up (outranPatch) only when it doubles: nothing else reads the record back. */
  record?: boolean;
}

/**
 * `freeSlots`: the pool's free slots counting nodes still provisioning; `poolNodes`: its provisioning and active
 * nodes; `bootMs`: the boot delay (observed or configured); `doubleWhenFull`: scaleUp.doubleWhenFull (off, every
 * full pool is round 1: it adds what it sees).
 */
export function outranRamp(
  pool: Pick<PoolRecord, 'outran'>,
  input: { now: Date; freeSlots: number; poolNodes: number; bootMs: number; doubleWhenFull: boolean },
): OutranRamp {
  if (input.freeSlots > 0) return { round: 0, minNodes: 0 };
  if (!input.doubleWhenFull) return { round: 1, minNodes: 0 };
  const previous = pool.outran;
  const at = previous === undefined ? NaN : Date.parse(previous.at);
  const recent = Number.isFinite(at) && input.now.getTime() - at <= OUTRAN_WINDOW_BOOTS * input.bootMs && at <= input.now.getTime();
  if (!recent) return { round: 1, minNodes: 0, record: true };
  return { round: previous!.rounds + 1, minNodes: Math.max(1, input.poolNodes), record: true };
}

/**
 * The pool record's `outran` after a scale-up of `count` nodes: set while a pool that doubles is full, cleared once
 * it is not (and always cleared on a pool that does not double).
 */
export function outranPatch(ramp: OutranRamp, now: Date, count: number): PoolRecord['outran'] {
  return ramp.round === 0 || !ramp.record ? undefined : { at: now.toISOString(), rounds: ramp.round, count };
}

/**
 * The decision log's sentence when the pool had no free slot left as it scaled up: the forecast and the headroom did
 * not buy the boot delay, gears wait for these nodes, and from the second round on the pool doubles.
 */
export function outranText(ramp: OutranRamp, freeSlots: number, bootMs: number, previous: PoolRecord['outran']): string {
  if (ramp.round === 0) return '';
  const over = freeSlots < 0 ? `${-freeSlots} gears over capacity` : 'no free slot left';
  const base = `; demand outran the boot delay: ${over}, new gears wait about ${formatDuration(Math.round(bootMs / 1000) * 1000)} for these nodes`;
  if (ramp.round === 1 || previous === undefined || ramp.minNodes === 0) return base;
  return `${base}; full again after +${previous.count} (round ${ramp.round}): gears wait unseen, so the pool doubles`;
}
