/**
 * One schema per message kind (the SQS bodies the functions exchange) and
 * one per EC2 event kind (EventBridge envelopes, normalized to flat records),
 * written with the validators of ./fields.ts.
 * Timestamps come out normalized to `Date#toISOString` form: the state table
 * orders stats by comparing `reportedAt` as strings.
 *
 * Each schema is built on first use (`once`): a function builds those of the
 * messages it takes when it starts (lib/adapters/lambda/runtime.ts,
 * `messageParser`), the ones it sends when it first sends one, and never the
 * others.
 */
import { MAX_DRAINS_PER_DECISION } from '../domain/budget.js';
import { slotHolders } from '../domain/node-stats.js';
import {
  MAX_GEARS_PER_NODE,
  anyString,
  arrayOf,
  boundedText,
  literal,
  object,
  oneOf,
  optional,
  pipe,
  type Output,
  type Validator,
  instanceIdSchema,
  integerIn,
  isoDateTimeSchema,
  nameSchema,
  nodeIdSchema,
  once,
  operationIdSchema,
  percentSchema,
  poolIdSchema,
  reasonSchema,
} from './fields.js';

/** The schema version every message kind is written with today. */
export const MESSAGE_VERSION = 1;

export const MESSAGE_TYPES = ['node-stats', 'scale-up', 'scale-down', 'drain-complete', 'gears-refused', 'district-capacity'] as const;
export type MessageType = (typeof MESSAGE_TYPES)[number];

function header<T extends MessageType>(type: T) {
  return {
    type: literal(type, JSON.stringify(type)),
    v: literal(MESSAGE_VERSION, `schema version ${MESSAGE_VERSION}`),
  };
}

const flag = () =>
  optional<boolean>((input, path, issues) => {
    if (typeof input !== 'boolean') issues.push({ path, message: `expected true or false, received ${JSON.stringify(input)?.slice(0, 40)}` });
    return input as boolean;
  });

export const gearSchema = once(() =>
  object(
    {
      uuid: boundedText(64),
      app: boundedText(128),
      size: boundedText(64),
      /** The tenant asked not to be moved (like karpenter.sh/do-not-disrupt): scale-down leaves its node alone. */
      doNotMove: flag(),
      /** Moving it restarts its tenant (an active head gear, or an unscaled app's): counted as TenantRestarts when moved. */
      disruptive: flag(),
      /** Stopped or idled: not in `activeGears`, and its move takes no slot on the target. */
      idle: flag(),
    },
    'an object {uuid, app, size}',
  ),
);

function isCount(value: unknown, min: number, max: number): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= min && value <= max;
}

export const nodeStatsMessageSchema = once(() => {
  const fields = object({
    ...header('node-stats'),
    nodeId: nodeIdSchema(),
    district: nameSchema(),
    profile: nameSchema(),
    // Bounded by the cross-field rule below; 2 x 6000 is the most any report can claim.
    activeGears: integerIn(0, 2 * MAX_GEARS_PER_NODE),
    maxActiveGears: integerIn(1, MAX_GEARS_PER_NODE, ' (the district UID pool)'),
    gears: optional(
      arrayOf(gearSchema(), 'an array of gears', { length: MAX_GEARS_PER_NODE, message: `must list at most ${MAX_GEARS_PER_NODE} gears` }),
    ),
    cpu: optional(percentSchema()),
    memory: optional(percentSchema()),
    idleGears: optional(integerIn(0, 2 * MAX_GEARS_PER_NODE)),
    disruptiveGears: optional(integerIn(0, 2 * MAX_GEARS_PER_NODE)),
    reportedAt: isoDateTimeSchema(),
  });
  const validator: Validator<Output<typeof fields>> = (input, path, issues) => {
    const message = fields(input, path, issues);
    if (typeof message === 'object' && message !== null && isCount(message.activeGears, 0, 2 * MAX_GEARS_PER_NODE)) {
      const idle = isCount(message.idleGears, 0, 2 * MAX_GEARS_PER_NODE) ? message.idleGears : 0;
      const disruptive = isCount(message.disruptiveGears, 0, 2 * MAX_GEARS_PER_NODE) ? message.disruptiveGears : 0;
      if (idle + disruptive > message.activeGears) {
        issues.push({
          path: [...path, message.disruptiveGears === undefined ? 'idleGears' : 'disruptiveGears'],
          message: `idleGears ${idle} + disruptiveGears ${disruptive} is more than activeGears ${message.activeGears}`,
        });
      }
    }
    // The agent lists every gear and counts the ones it does not mark idle. A list that marks gears idle yet leaves
    // more unmarked than the count is not the agent's: it would let a drain move active gears as idle ones, which
    // take no slot. (A list that marks none idle takes a slot for every gear, whatever it counts.)
    if (typeof message === 'object' && message !== null && Array.isArray(message.gears) && isCount(message.activeGears, 0, 2 * MAX_GEARS_PER_NODE)) {
      const gears = message.gears.filter((gear) => typeof gear === 'object' && gear !== null);
      const listedActive = slotHolders(gears);
      if (listedActive < gears.length && listedActive > message.activeGears) {
        issues.push({
          path: [...path, 'gears'],
          message: `gears lists ${listedActive} gear(s) not marked idle, more than activeGears ${message.activeGears}`,
        });
      }
    }
    // Unidled gears may overcommit a node a little, never beyond twice its capacity. Checked even
    // when unrelated fields are wrong, so every problem is reported at once.
    if (
      typeof message === 'object' &&
      message !== null &&
      isCount(message.activeGears, 0, 2 * MAX_GEARS_PER_NODE) &&
      isCount(message.maxActiveGears, 1, MAX_GEARS_PER_NODE) &&
      message.activeGears > 2 * message.maxActiveGears
    ) {
      issues.push({
        path: [...path, 'activeGears'],
        message:
          `activeGears ${message.activeGears} is more than twice maxActiveGears ${message.maxActiveGears} ` +
          `(at most ${2 * message.maxActiveGears})`,
      });
    }
    return message;
  };
  return validator;
});

export const scaleUpMessageSchema = once(() =>
  object({
    ...header('scale-up'),
    decisionId: operationIdSchema(),
    pool: poolIdSchema(),
    count: integerIn(1, 1000),
    reason: reasonSchema(),
    decidedAt: isoDateTimeSchema(),
  }),
);

/**
 * A scale-down's prices must price the nodes it drains, each at a limit no
 * lower than the gears it saw: a limit below would call off every drain, one
 * for another node would price nothing.
 */
function withConsistentPrices<T extends { nodeId: string; alsoNodeIds?: string[] | undefined; prices?: Array<{ nodeId: string; gears: number; limit: number }> | undefined }>(
  validator: Validator<T>,
): Validator<T> {
  return (input, path, issues) => {
    const before = issues.length;
    const value = validator(input, path, issues);
    if (issues.length > before || !value.prices) return value;
    const drained = new Set([value.nodeId, ...(value.alsoNodeIds ?? [])]);
    value.prices.forEach((price, index) => {
      if (!drained.has(price.nodeId)) issues.push({ path: [...path, 'prices', index, 'nodeId'], message: `must name a node the decision drains (got ${JSON.stringify(price.nodeId)})` });
      else if (price.limit < price.gears) issues.push({ path: [...path, 'prices', index, 'limit'], message: `must be at least gears (${price.gears}), got ${price.limit}` });
    });
    return value;
  };
}

export const scaleDownMessageSchema = once(() =>
  withConsistentPrices(object({
    ...header('scale-down'),
    decisionId: operationIdSchema(),
    pool: poolIdSchema(),
    nodeId: nodeIdSchema(),
    /** More nodes the decision drains at once (the evaluator's `drainsPerDecision`), each its own drain. */
    alsoNodeIds: optional(
      arrayOf(nodeIdSchema(), 'an array of node ids', { length: MAX_DRAINS_PER_DECISION - 1, message: `must name at most ${MAX_DRAINS_PER_DECISION - 1} more nodes` }),
    ),
    /** Each drained node's price (lib/domain/drain-price.ts): past its limit when the drain starts, the drain may be called off. */
    prices: optional(
      arrayOf(
        object(
          {
            nodeId: nodeIdSchema(),
            gears: integerIn(0, MAX_GEARS_PER_NODE),
            limit: integerIn(0, MAX_GEARS_PER_NODE),
            next: nodeIdSchema(),
            nextGears: integerIn(0, MAX_GEARS_PER_NODE),
          },
          'a node price',
        ),
        'an array of node prices',
        { length: MAX_DRAINS_PER_DECISION, message: `must price at most ${MAX_DRAINS_PER_DECISION} nodes` },
      ),
    ),
    reason: reasonSchema(),
    decidedAt: isoDateTimeSchema(),
  })),
);

export const drainCompleteMessageSchema = once(() =>
  object({
    ...header('drain-complete'),
    drainId: operationIdSchema(),
    nodeId: nodeIdSchema(),
    pool: poolIdSchema(),
    completedAt: isoDateTimeSchema(),
  }),
);

/** Longest window one gears-refused report may cover: an older refusal says nothing about what waits now. */
export const MAX_REFUSED_WINDOW_MS = 60 * 60_000;
/**
 * Most refusals one report may claim: a report naming no district covers every district of the profile, so one
 * district's 6000 UIDs is no bound. Far above any real window; the evaluator's limits (pool max, maxNodesTotal) bound
 * what it buys.
 */
export const MAX_REFUSED_GEARS = 100_000;

/**
 * The broker-side count of gear creations refused for lack of capacity
 * (origin-server's NodeUnavailableException "No nodes available...", exit
 * code 140, one RESULT=FAILURE line in the broker's user_action.log) in one
 * window: the gears no node reports, OpenShift v2's pending pods. `district`
 * is absent when the broker named none (a new application: every district of
 * the profile was full). `zonesRequired`: the refusals asked for a node in a
 * zone ("gear size/zone combination": the broker requires zones for app
 * creation), which a node added in no zone never is.
 */
export const gearsRefusedMessageSchema = once(() => {
  const fields = object({
    ...header('gears-refused'),
    district: optional(nameSchema()),
    profile: nameSchema(),
    refused: integerIn(0, MAX_REFUSED_GEARS),
    windowStart: isoDateTimeSchema(),
    windowEnd: isoDateTimeSchema(),
    zonesRequired: flag(),
  });
  const validator: Validator<Output<typeof fields>> = (input, path, issues) => {
    const message = fields(input, path, issues);
    if (typeof message !== 'object' || message === null) return message;
    const start = typeof message.windowStart === 'string' ? Date.parse(message.windowStart) : NaN;
    const end = typeof message.windowEnd === 'string' ? Date.parse(message.windowEnd) : NaN;
    if (Number.isFinite(start) && Number.isFinite(end)) {
      if (end <= start) issues.push({ path: [...path, 'windowEnd'], message: `must be after windowStart ${message.windowStart}` });
      else if (end - start > MAX_REFUSED_WINDOW_MS) {
        issues.push({ path: [...path, 'windowStart'], message: `window of ${Math.round((end - start) / 60_000)} minutes is longer than ${MAX_REFUSED_WINDOW_MS / 60_000}` });
      }
    }
    return message;
  };
  return validator;
});

/** Most UIDs one district may claim: origin-server's default is 6,000 (a gear's ports come from its UID), `add-capacity` grows it. */
export const MAX_DISTRICT_UIDS = 1_000_000;

/**
 * A district's UIDs as the broker holds them (origin-server's District:
 * `max_capacity`, and `available_capacity` of them not reserved), read by the
 * broker-side reporter every few minutes from `oo-admin-ctl-district`. Every
 * gear of the district, stopped or idle too, holds one from its creation to
 * its deletion (a move within the district keeps it), and the broker places
 * no new gear in a district with none left: it refuses it with the same "No
 * nodes available" as when every node is full, which no node can cure.
 */
export const districtCapacityMessageSchema = once(() => {
  const fields = object({
    ...header('district-capacity'),
    district: nameSchema(),
    profile: nameSchema(),
    maxCapacity: integerIn(1, MAX_DISTRICT_UIDS),
    availableCapacity: integerIn(0, MAX_DISTRICT_UIDS),
    readAt: isoDateTimeSchema(),
  });
  const validator: Validator<Output<typeof fields>> = (input, path, issues) => {
    const message = fields(input, path, issues);
    if (typeof message !== 'object' || message === null) return message;
    if (typeof message.availableCapacity === 'number' && typeof message.maxCapacity === 'number' && message.availableCapacity > message.maxCapacity) {
      issues.push({ path: [...path, 'availableCapacity'], message: `must be at most maxCapacity ${message.maxCapacity}` });
    }
    return message;
  };
  return validator;
});

export type NodeStatsMessage = Output<ReturnType<typeof nodeStatsMessageSchema>>;
export type GearsRefusedMessage = Output<ReturnType<typeof gearsRefusedMessageSchema>>;
export type DistrictCapacityMessage = Output<ReturnType<typeof districtCapacityMessageSchema>>;
export type ScaleUpMessage = Output<ReturnType<typeof scaleUpMessageSchema>>;
export type ScaleDownMessage = Output<ReturnType<typeof scaleDownMessageSchema>>;
export type DrainCompleteMessage = Output<ReturnType<typeof drainCompleteMessageSchema>>;
/** The messages the functions send each other through SQS. */
export type Message = NodeStatsMessage | ScaleUpMessage | ScaleDownMessage | DrainCompleteMessage | GearsRefusedMessage | DistrictCapacityMessage;

/** Every schema by type and version (built on first call); a new version is a new entry, the old one stays readable. */
export const MESSAGE_SCHEMAS: {
  readonly [T in MessageType]: ReadonlyMap<number, () => Validator<Extract<Message, { type: T }>>>;
} = {
  'node-stats': new Map([[1, nodeStatsMessageSchema]]),
  'scale-up': new Map([[1, scaleUpMessageSchema]]),
  'scale-down': new Map([[1, scaleDownMessageSchema]]),
  'drain-complete': new Map([[1, drainCompleteMessageSchema]]),
  'gears-refused': new Map([[1, gearsRefusedMessageSchema]]),
  'district-capacity': new Map([[1, districtCapacityMessageSchema]]),
};

// ---------------------------------------------------------------------------
// EC2 events, as EventBridge delivers them to an SQS target.

export const EC2_EVENT_SOURCE = 'aws.ec2';

export const EC2_INSTANCE_STATES = ['pending', 'running', 'stopping', 'stopped', 'shutting-down', 'terminated'] as const;
export type Ec2InstanceState = (typeof EC2_INSTANCE_STATES)[number];

export const EC2_SPOT_ACTIONS = ['terminate', 'stop', 'hibernate'] as const;
export type Ec2SpotAction = (typeof EC2_SPOT_ACTIONS)[number];

export const EC2_DETAIL_TYPES = {
  stateChange: 'EC2 Instance State-change Notification',
  spotInterruption: 'EC2 Spot Instance Interruption Warning',
  rebalance: 'EC2 Instance Rebalance Recommendation',
} as const;

export interface Ec2StateChangeEvent {
  type: 'ec2-state-change';
  /** The EventBridge event id: the idempotency key. */
  eventId: string;
  instanceId: string;
  state: Ec2InstanceState;
  time: string;
}

export interface Ec2SpotInterruptionEvent {
  type: 'ec2-spot-interruption';
  eventId: string;
  instanceId: string;
  action: Ec2SpotAction;
  time: string;
}

export interface Ec2RebalanceEvent {
  type: 'ec2-rebalance';
  eventId: string;
  instanceId: string;
  time: string;
}

/** An EC2 event, normalized from its EventBridge envelope. */
export type Ec2Event = Ec2StateChangeEvent | Ec2SpotInterruptionEvent | Ec2RebalanceEvent;

/** The `detail-type` each normalized EC2 event comes from. */
export const EC2_EVENT_DETAIL_TYPES: { readonly [T in Ec2Event['type']]: string } = {
  'ec2-state-change': EC2_DETAIL_TYPES.stateChange,
  'ec2-spot-interruption': EC2_DETAIL_TYPES.spotInterruption,
  'ec2-rebalance': EC2_DETAIL_TYPES.rebalance,
};

function envelope<D extends string, S extends Record<string, Validator<unknown>>>(detailType: D, detail: S) {
  return object({
    version: anyString(),
    id: boundedText(256),
    'detail-type': literal(detailType, JSON.stringify(detailType)),
    source: literal(EC2_EVENT_SOURCE, JSON.stringify(EC2_EVENT_SOURCE)),
    account: anyString(),
    time: isoDateTimeSchema(),
    region: anyString(),
    resources: arrayOf(anyString(), 'an array of strings'),
    detail: object(detail, 'an object'),
  });
}

export const ec2StateChangeEventSchema = once(() =>
  pipe(
    envelope(EC2_DETAIL_TYPES.stateChange, {
      'instance-id': instanceIdSchema(),
      state: oneOf(EC2_INSTANCE_STATES, `one of ${EC2_INSTANCE_STATES.join(', ')}`),
    }),
    (event): Ec2StateChangeEvent => ({
      type: 'ec2-state-change',
      eventId: event.id,
      instanceId: event.detail['instance-id'],
      state: event.detail.state,
      time: event.time,
    }),
  ),
);

export const ec2SpotInterruptionEventSchema = once(() =>
  pipe(
    envelope(EC2_DETAIL_TYPES.spotInterruption, {
      'instance-id': instanceIdSchema(),
      'instance-action': oneOf(EC2_SPOT_ACTIONS, `one of ${EC2_SPOT_ACTIONS.join(', ')}`),
    }),
    (event): Ec2SpotInterruptionEvent => ({
      type: 'ec2-spot-interruption',
      eventId: event.id,
      instanceId: event.detail['instance-id'],
      action: event.detail['instance-action'],
      time: event.time,
    }),
  ),
);

export const ec2RebalanceEventSchema = once(() =>
  pipe(
    envelope(EC2_DETAIL_TYPES.rebalance, {
      'instance-id': instanceIdSchema(),
    }),
    (event): Ec2RebalanceEvent => ({
      type: 'ec2-rebalance',
      eventId: event.id,
      instanceId: event.detail['instance-id'],
      time: event.time,
    }),
  ),
);

/** EC2 event schemas by `detail-type` (built on first call). */
export const EC2_EVENT_SCHEMAS: ReadonlyMap<string, () => Validator<Ec2Event>> = new Map<string, () => Validator<Ec2Event>>([
  [EC2_DETAIL_TYPES.stateChange, ec2StateChangeEventSchema],
  [EC2_DETAIL_TYPES.spotInterruption, ec2SpotInterruptionEventSchema],
  [EC2_DETAIL_TYPES.rebalance, ec2RebalanceEventSchema],
]);

/** What `parseMessage` returns on success. */
export type ParsedMessage = Message | Ec2Event;
