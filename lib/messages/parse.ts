import { ValidationError, type ValidationIssue } from '../errors.js';
import { issuesWithValues } from '../validation.js';
import { MAX_BODY_BYTES, bodyBytes, decodeBody, oversizeIssue } from './body.js';
import { normalizeIsoDateTime, validate, type Validator } from './fields.js';
import {
  EC2_DETAIL_TYPES,
  EC2_EVENT_DETAIL_TYPES,
  EC2_EVENT_SCHEMAS,
  EC2_EVENT_SOURCE,
  MESSAGE_SCHEMAS,
  MESSAGE_TYPES,
  type Message,
  type MessageType,
  type ParsedMessage,
} from './schemas.js';

export type ParseResult = { ok: true; message: ParsedMessage } | { ok: false; error: ValidationError };

export interface ParseOptions {
  /**
   * The time of reception. When given, a `node-stats` report dated more than
   * `MAX_CLOCK_AHEAD_MS` after it is rejected: stats are ordered by
   * `reportedAt`, so one far-future report would shadow every later one.
   */
  now?: Date;
}

/** How far ahead of `now` a node's clock may be. */
export const MAX_CLOCK_AHEAD_MS = 5 * 60_000;

/** At most this many issues are listed; the rest are counted in one last issue. */
export const MAX_REPORTED_ISSUES = 50;

const KNOWN_TYPES = `known types: ${MESSAGE_TYPES.join(', ')} (an EC2 event needs source and detail-type instead)`;

/**
 * Parses an SQS body (a JSON string) or an already-decoded value into a typed,
 * normalized message, or a `ValidationError` whose `field` names the first bad
 * field and whose `issues` list every problem. Never throws.
 */
export function parseMessage(input: unknown, options: ParseOptions = {}): ParseResult {
  try {
    return parseUnchecked(input, options);
  } catch (error) {
    // Unreachable for JSON input; guards against exotic objects (throwing getters, proxies).
    let detail = 'unexpected error';
    try {
      detail = error instanceof Error ? error.message : String(error);
    } catch {
      // keep the generic detail
    }
    return fail([{ path: '', message: `cannot validate message: ${detail}` }], 'invalid message');
  }
}

/**
 * Builds now the schemas of the messages of `types` (every version), which
 * are otherwise built on first use: a handler calls it at cold start for the
 * messages its queues carry, so its first batch only parses.
 */
export function prepareSchemas(types: readonly ParsedMessage['type'][]): void {
  for (const type of types) {
    if (isMessageType(type)) for (const schema of MESSAGE_SCHEMAS[type].values()) schema();
    else EC2_EVENT_SCHEMAS.get(EC2_EVENT_DETAIL_TYPES[type])?.();
  }
}

/**
 * The SQS body for a message: validated and normalized exactly as the
 * consumer will parse it, so no producer can send what its consumer would
 * dead-letter. Throws `ValidationError` for an invalid message.
 */
export function serializeMessage(message: Message): string {
  const parsed = parseMessage(message);
  if (!parsed.ok) throw parsed.error;
  const body = JSON.stringify(parsed.message);
  const bytes = bodyBytes(body);
  if (bytes > MAX_BODY_BYTES) throw new ValidationError(oversizeIssue(bytes), `invalid ${message.type} message`);
  return body;
}

function parseUnchecked(input: unknown, options: ParseOptions): ParseResult {
  let value = input;
  if (typeof input === 'string') {
    const decoded = decodeBody(input);
    if (!decoded.ok) return fail([decoded.issue], 'invalid message');
    value = decoded.value;
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value) || ArrayBuffer.isView(value)) {
    return fail([{ path: '', message: `message must be a JSON object, got ${kindOf(value)}` }], 'invalid message');
  }
  const body = value as Record<string, unknown>;

  if (!has(body, 'type')) {
    if (has(body, 'source') || has(body, 'detail-type')) return parseEc2Event(body);
    return fail([{ path: 'type', message: `required; ${KNOWN_TYPES}` }], 'invalid message');
  }
  const type = body.type;
  if (typeof type !== 'string' || !isMessageType(type)) {
    return fail([{ path: 'type', message: `unknown message type; ${KNOWN_TYPES}`, value: type }], 'invalid message');
  }

  const versions = MESSAGE_SCHEMAS[type];
  const supported = `supported versions of ${type}: ${[...versions.keys()].join(', ')}`;
  if (!has(body, 'v')) return fail([{ path: 'v', message: `required (the schema version); ${supported}` }], `invalid ${type} message`);
  const v = body.v;
  const schema = typeof v === 'number' ? versions.get(v) : undefined;
  if (schema === undefined) {
    return fail([{ path: 'v', message: `unsupported schema version; ${supported}`, value: v }], `invalid ${type} message`);
  }

  const issues: ValidationIssue[] = [];
  const result = validate(schema() as Validator<Message>, body);
  if (!result.ok) issues.push(...issuesWithValues(result.issues, body));
  const timeField = type === 'node-stats' ? 'reportedAt' : type === 'gears-refused' ? 'windowEnd' : type === 'district-capacity' ? 'readAt' : undefined;
  if (timeField !== undefined && options.now !== undefined) {
    const field = timeField;
    const ahead = futureIssue(field, body[field], options.now);
    if (ahead !== undefined) issues.push(ahead);
  }
  if (issues.length > 0 || !result.ok) return fail(issues, `invalid ${type} v${String(v)} message`);
  return { ok: true, message: result.value };
}

function parseEc2Event(body: Record<string, unknown>): ParseResult {
  const context = 'invalid EC2 event';
  const source = body.source;
  if (source !== EC2_EVENT_SOURCE) {
    const message = has(body, 'source')
      ? `unsupported event source; expected ${JSON.stringify(EC2_EVENT_SOURCE)}`
      : `required; expected ${JSON.stringify(EC2_EVENT_SOURCE)}`;
    return fail([has(body, 'source') ? { path: 'source', message, value: source } : { path: 'source', message }], context);
  }
  const detailType = body['detail-type'];
  const schema = typeof detailType === 'string' ? EC2_EVENT_SCHEMAS.get(detailType) : undefined;
  if (schema === undefined) {
    const known = Object.values(EC2_DETAIL_TYPES)
      .map((name) => JSON.stringify(name))
      .join(', ');
    const issue: ValidationIssue = has(body, 'detail-type')
      ? { path: 'detail-type', message: `unsupported EC2 event; known detail-types: ${known}`, value: detailType }
      : { path: 'detail-type', message: `required; known detail-types: ${known}` };
    return fail([issue], context);
  }
  const result = validate(schema(), body);
  if (!result.ok) return fail(issuesWithValues(result.issues, body), context);
  return { ok: true, message: result.value };
}

function futureIssue(field: string, reportedAt: unknown, now: Date): ValidationIssue | undefined {
  const nowMs = now.getTime();
  if (typeof reportedAt !== 'string' || !Number.isFinite(nowMs)) return undefined;
  const normalized = normalizeIsoDateTime(reportedAt);
  if (normalized === undefined) return undefined; // already reported as not an ISO time
  const aheadMs = Date.parse(normalized) - nowMs;
  if (aheadMs <= MAX_CLOCK_AHEAD_MS) return undefined;
  return {
    path: field,
    message:
      `is ${Math.round(aheadMs / 1000)}s in the future (now is ${now.toISOString()}); ` +
      `a reporter's clock may be at most ${MAX_CLOCK_AHEAD_MS / 60_000} minutes ahead`,
    value: reportedAt,
  };
}

function fail(issues: readonly ValidationIssue[], context: string): ParseResult {
  const list =
    issues.length > MAX_REPORTED_ISSUES
      ? [
          ...issues.slice(0, MAX_REPORTED_ISSUES),
          { path: '', message: `and ${issues.length - MAX_REPORTED_ISSUES} more problems not listed` },
        ]
      : issues;
  return { ok: false, error: new ValidationError(list, context) };
}

function has(object: object, key: string): boolean {
  return Object.prototype.hasOwnProperty.call(object, key);
}

function isMessageType(type: string): type is MessageType {
  return (MESSAGE_TYPES as readonly string[]).includes(type);
}

function kindOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (ArrayBuffer.isView(value)) return 'binary data';
  if (typeof value === 'number' && !Number.isFinite(value)) return String(value);
  return `a ${typeof value}`;
}
