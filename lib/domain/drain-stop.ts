/**
 * How an aborted drain ended, read from the marks its stop stored: what it
 * counts, whether the pool backs off, and the words for the log and the
 * decision log. Only a started drain that stopped for a fault pages
 * (DrainsAborted) and holds the pool's scale-down back (delayAfterFailure):
 * a call-off, a pool that outgrew the drain and a node that outgrew its
 * price (drain-price.ts) are the scaler following demand, a cancel is the
 * operator's own action, audited when it was asked.
 */
import type { DecisionKind, DrainRecord } from './model.js';

export type StopKind = 'called-off' | 'outgrown' | 'repriced' | 'cancelled' | 'failed' | 'refused';

export interface DrainStop {
  kind: StopKind;
  /** The count it adds to (infra/monitoring.yml alarms on DrainsAborted only). */
  metric?: 'DrainsAborted' | 'DrainsCalledOff' | 'DrainsOutgrown';
  /** Sets the pool's lastDrainFailureAt. */
  backsOff: boolean;
  /** The verb of the decision-log entry: `drain D of N <ended>: reason`. */
  ended: string;
  logText: string;
  decisionKind: Extract<DecisionKind, 'scale-up' | 'scale-down' | 'failure' | 'refused'>;
}

const STOPS: Record<StopKind, Omit<DrainStop, 'kind'>> = {
  'called-off': {
    metric: 'DrainsCalledOff',
    backsOff: false,
    ended: 'called off',
    logText: 'drain called off; node re-opened for the pool scaling up, moved gears stay where they are',
    decisionKind: 'scale-up',
  },
  outgrown: {
    metric: 'DrainsOutgrown',
    backsOff: false,
    ended: 'outgrown',
    logText: 'drain outgrown: the pool has no room left for its gears; node re-opened, moved gears stay where they are',
    decisionKind: 'scale-down',
  },
  repriced: {
    backsOff: false,
    ended: 'repriced',
    logText: 'drain called off before its first move: its node took more gears than the decision priced; node re-opened',
    decisionKind: 'scale-down',
  },
  cancelled: {
    backsOff: false,
    ended: 'stopped',
    logText: 'drain cancelled by an operator; node re-opened, moved gears stay where they are',
    decisionKind: 'scale-down',
  },
  failed: {
    metric: 'DrainsAborted',
    backsOff: true,
    ended: 'aborted',
    logText: 'drain aborted; node re-opened, moved gears stay where they are',
    decisionKind: 'failure',
  },
  refused: { backsOff: false, ended: 'refused', logText: 'drain refused before it started', decisionKind: 'refused' },
};

/** The marks a stop stores, in the order they are read: a drain carries at most one. */
const MARKS = [
  ['calledOffAt', 'called-off'],
  ['outgrownAt', 'outgrown'],
  ['repricedAt', 'repriced'],
  ['cancelledAt', 'cancelled'],
] as const satisfies ReadonlyArray<readonly [keyof DrainRecord, StopKind]>;

/** `started`: the drain had closed its node or been stopped in flight; a drain refused at its start is no failure. */
export function drainStop(drain: Pick<DrainRecord, (typeof MARKS)[number][0]>, started: boolean): DrainStop {
  const marked = MARKS.find(([field]) => Boolean(drain[field]));
  const kind: StopKind = marked ? marked[1] : started ? 'failed' : 'refused';
  return { kind, ...STOPS[kind] };
}
