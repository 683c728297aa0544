/**
 * The configuration: ONE zod schema for the whole file. Every key has a
 * default except the pools' `max`, so a minimal file is a list of pools.
 * Durations are written as text (`30s`, `10m`, `1h30m`) and come out as
 * milliseconds. Objects are strict: an unknown key (a typo such as
 * `scaledown`) is an error reported at its own path.
 *
 * Cross-field rules (hysteresis, min <= max, unique pools, handler needs)
 * live in one `superRefine` at the root that runs even when some fields are
 * already invalid, so a wrong file reports every problem in one go.
 */
import { poolIdOf } from '../domain/model.js';
import { MODES } from '../domain/controls.js';
import * as z from '../zod.js';
import { crossFieldChecks } from './cross-field-checks.js';
import { buildPoolSchema } from './pool-schema.js';
import { buildScaleDownSchema } from './scale-down-schema.js';
import { buildScaleUpSchema } from './scale-up-schema.js';
import { dur, duration, primitives } from './schema-primitives.js';
import { statsAuthSchema } from './stats-auth.js';

export { DNS_NAME, DURATION_MESSAGE, NAMING_BASE, duration } from './schema-primitives.js';
export { CANDIDATE_STRATEGIES } from './scale-down-schema.js';
export { VOLUME_TYPES } from './pool-schema.js';

export const HANDLERS = ['log', 'ec2', 'spool', 'notify'] as const;
export const PLATFORM_KINDS = ['simulated', 'openshift-broker'] as const;

/**
 * Builds the schema, on first use: building these few hundred zod objects
 * costs about 20 ms in a fresh process, which a command that never reads a
 * configuration file need not pay. (A deployed function does not hold it at
 * all: lib/config/parse.ts.)
 */
function buildConfigSchema() {
  const { fraction, nonEmpty, int, positive, namingBase, namingDomain } = primitives();
  const scaleUpSchema = buildScaleUpSchema();
  const scaleDownSchema = buildScaleDownSchema();
  const poolSchema = buildPoolSchema();

  const platformSchema = z.strictObject({
    /** `simulated` (moves happen in memory) or `openshift-broker` (commands on the broker host). */
    kind: z._default(z.enum(PLATFORM_KINDS), 'simulated'),
    /** The broker host's instance id; required for `openshift-broker`. */
    brokerInstanceId: z.optional(nonEmpty),
    /** Simulated platform: how long one gear move takes. */
    moveDuration: dur('30s'),
    /** Simulated platform: share of moves that fail (0..1). */
    moveFailureRate: z._default(fraction, 0),
    /** openshift-broker: longest run of one admin command on the broker host (oo-admin-move of a large gear takes minutes). */
    commandTimeout: dur('20m', { positive: true }),
    /** openshift-broker: the broker's installation directory (the Rails environment the gear listing loads). */
    brokerDir: z._default(nonEmpty, '/var/www/openshift/broker'),
  });

  const limitsSchema = z.strictObject({
    maxNodesTotal: z._default(int(1), 100),
    maxCores: z.optional(int(1)),
    maxMemoryGiB: z.optional(positive),
  });

  const cloudRetrySchema = z.strictObject({
    /** Attempts of one cloud or DNS call that is throttled or failing transiently, the first included. */
    attempts: z._default(int(1, 10), 4),
    /** Backoff before the second attempt; doubles per attempt, with full jitter. */
    baseDelay: dur('500ms', { positive: true }),
    /** Longest backoff between two attempts. */
    maxDelay: dur('8s', { positive: true }),
  });

  const namingSchema = z.strictObject({
    base: z._default(namingBase, 'node'),
    domain: z._default(namingDomain, 'example.com'),
  });

  const dnsSchema = z.strictObject({
    hostedZoneId: nonEmpty,
    ttl: z._default(int(0), 300),
  });

  const spoolSchema = z.strictObject({
    bucket: z.string().check(z.regex(/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/, 'must be a valid S3 bucket name')),
    prefix: z._default(z.string(), 'nodescaler/'),
  });

  const notifySchema = z.strictObject({
    topicArn: z.string().check(z.regex(/^arn:aws[a-z-]*:sns:[a-z0-9-]+:\d{12}:[A-Za-z0-9_-]+(?:\.fifo)?$/, 'must be an SNS topic ARN')),
  });

  const sweeperSchema = z.strictObject({
    /** Terminate instances carrying our tags that the state table does not know. */
    terminateOrphans: z._default(z.boolean(), false),
    /** How old an unknown instance must be before it counts as an orphan. */
    orphanAge: dur('10m', { positive: true }),
  });

  const rootSchema = z.strictObject({
    /** Where scale-up goes: `log` (the safe default: changes nothing in any cloud), `ec2`, `spool` (S3), `notify` (SNS). */
    handler: z._default(z.enum(HANDLERS), 'log'),
    platform: z.prefault(platformSchema, {}),
    limits: z.prefault(limitsSchema, {}),
    scaleUp: z.prefault(scaleUpSchema, {}),
    scaleDown: z.prefault(scaleDownSchema, {}),
    /** Stats older than this are ignored when computing utilization. */
    statsMaxAge: dur('5m', { positive: true }),
    /** Least time between two evaluations of one pool triggered by stats (the tick always evaluates). */
    evaluationInterval: dur('30s'),
    /** How long a pool's in-flight action lease lasts. */
    leaseTtl: dur('15m', { positive: true }),
    /**
     * A decision no consumer has taken up this long after it was sent (its
     * message dead-lettered, say) is sent again, every time this passes,
     * until its lease expires. At least 5m: SQS FIFO queues drop a repeated
     * deduplication id within 5 minutes. leaseTtl or more: never re-sent.
     */
    leaseResendAfter: dur('6m', { positive: true }),
    /**
     * Every consumer refuses a decision (scale-up, scale-down, an operator's
     * drain) older than this: one re-driven from a dead-letter queue days
     * later must not act on a pool that changed since. Unset: leaseTtl. Not
     * below leaseTtl: a decision is re-sent, unchanged, while its lease lasts.
     */
    decisionMaxAge: z.optional(duration({ positive: true })),
    /** How long decision log entries are kept (DynamoDB TTL). */
    decisionLogTtl: dur('90d', { positive: true }),
    /**
     * How long an ended drain (completed or aborted) and its moves are kept
     * after it ends (DynamoDB TTL): what `nodescaler disruption` reads back.
     * The gear move history that `maxMovesPerGear` counts expires on its own.
     */
    drainHistoryTtl: dur('90d', { positive: true }),
    /** `shadow`: every pool decides and logs what it would do ("would add 2 nodes"), and nothing acts. */
    mode: z._default(z.enum(MODES), 'active'),
    /** Default naming for pools that have none of their own. */
    naming: z.prefault(namingSchema, {}),
    dns: z.optional(dnsSchema),
    spool: z.optional(spoolSchema),
    notify: z.optional(notifySchema),
    sweeper: z.prefault(sweeperSchema, {}),
    /** Retries of throttled cloud and DNS calls inside one invocation (after that, the message is redelivered). */
    cloudRetry: z.prefault(cloudRetrySchema, {}),
    /** Who may send node-stats: lib/config/stats-auth.ts. */
    statsAuth: z.prefault(statsAuthSchema(), {}),
    pools: z.array(poolSchema).check(z.minLength(1, 'at least one pool is required')),
  });

  return rootSchema.check(z.superRefine(crossFieldChecks, { when: () => true }));
}

let built: ReturnType<typeof buildConfigSchema> | undefined;

/** The configuration schema, built on first use (see buildConfigSchema). */
export function configSchema(): ReturnType<typeof buildConfigSchema> {
  built ??= buildConfigSchema();
  return built;
}

export type Config = z.output<ReturnType<typeof configSchema>>;
/** What a file may hold: everything optional that has a default, durations as text. */
export type ConfigInput = z.input<ReturnType<typeof configSchema>>;
export type PoolConfig = Config['pools'][number];
export type NodeTemplate = PoolConfig['template'];
export type InstanceTypeConfig = NodeTemplate['instanceTypes'][number];
export type Naming = Config['naming'];
export type Handler = Config['handler'];
export type CandidateStrategy = Config['scaleDown']['candidateStrategy'];

/** The naming a pool's nodes get: its own, key by key, else the top-level default. */
export function poolNaming(config: Pick<Config, 'naming'>, pool: Pick<PoolConfig, 'naming'>): Naming {
  return {
    base: pool.naming?.base ?? config.naming.base,
    domain: pool.naming?.domain ?? config.naming.domain,
  };
}

/** The configuration of one pool (`district/profile`), if it is configured. */
export function findPoolConfig(config: Pick<Config, 'pools'>, pool: string): PoolConfig | undefined {
  return config.pools.find((entry) => poolIdOf(entry.district, entry.profile) === pool);
}