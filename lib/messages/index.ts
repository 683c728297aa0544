/**
 * The messages of the system: one schema per kind (plain validators, see
 * fields.ts), one `parseMessage`
 * for every SQS body (messages between the functions and EC2 events from
 * EventBridge), and `serializeMessage` for the producers.
 */
export {
  MESSAGE_VERSION,
  MESSAGE_TYPES,
  MESSAGE_SCHEMAS,
  gearSchema,
  nodeStatsMessageSchema,
  scaleUpMessageSchema,
  scaleDownMessageSchema,
  drainCompleteMessageSchema,
  gearsRefusedMessageSchema,
  districtCapacityMessageSchema,
  MAX_DISTRICT_UIDS,
  MAX_REFUSED_WINDOW_MS,
  MAX_REFUSED_GEARS,
  EC2_EVENT_SOURCE,
  EC2_DETAIL_TYPES,
  EC2_INSTANCE_STATES,
  EC2_SPOT_ACTIONS,
  EC2_EVENT_DETAIL_TYPES,
  EC2_EVENT_SCHEMAS,
  ec2StateChangeEventSchema,
  ec2SpotInterruptionEventSchema,
  ec2RebalanceEventSchema,
} from './schemas.js';
export type {
  MessageType,
  NodeStatsMessage,
  ScaleUpMessage,
  ScaleDownMessage,
  DrainCompleteMessage,
  GearsRefusedMessage,
  DistrictCapacityMessage,
  Message,
  Ec2InstanceState,
  Ec2SpotAction,
  Ec2StateChangeEvent,
  Ec2SpotInterruptionEvent,
  Ec2RebalanceEvent,
  Ec2Event,
  ParsedMessage,
} from './schemas.js';
export {
  MAX_GEARS_PER_NODE,
  nodeIdSchema,
  nameSchema,
  poolIdSchema,
  operationIdSchema,
  reasonSchema,
  isoDateTimeSchema,
  instanceIdSchema,
  normalizeIsoDateTime,
} from './fields.js';
export { MAX_BODY_BYTES, locateJsonError } from './body.js';
export { parseMessage, prepareSchemas, serializeMessage, MAX_CLOCK_AHEAD_MS, MAX_REPORTED_ISSUES } from './parse.js';
export type { ParseResult, ParseOptions } from './parse.js';
