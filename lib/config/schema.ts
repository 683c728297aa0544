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
import { parseDuration } from '../domain/duration.js';
import { MODES } from '../domain/controls.js';
import { MAX_SCHEDULE_DURATION, parseCron } from '../domain/schedule.js';
import { poolIdOf } from '../domain/model.js';
import * as z from '../zod.js';
import { budgetSchema, countOrPercent, poolBudgetSchema } from './budget-schema.js';
import { crossFieldChecks } from './cross-field-checks.js';
import { statsAuthSchema } from './stats-auth.js';

export const DURATION_MESSAGE = 'expected a duration like 30s, 10m, 1h';

/** A duration written as text, in milliseconds in the output. */
export function duration(options: { positive?: boolean } = {}) {
  return z.pipe(
    z.string({ error: DURATION_MESSAGE }),
    z.transform((text: string, ctx) => {
      const ms = parseDuration(text);
      if (ms === undefined) {
        ctx.issues.push({ code: 'custom', message: DURATION_MESSAGE, input: text });
        return z.NEVER;
      }
      if (options.positive && ms <= 0) {
        ctx.issues.push({ code: 'custom', message: 'must be longer than 0s', input: text });
        return z.NEVER;
      }
      return ms;
    }),
  );
}

/** An optional-with-default duration: `dur('10m')` is 600000 when absent. */
function dur(defaultText: string, options: { positive?: boolean } = {}) {
  return z.prefault(duration(options), defaultText);
}

/** A string that must start with an AWS id prefix such as `ami-`; the rest is not checked, so simulated ids pass. */
function awsId(prefix: string) {
  return z.string().check(z.refine((text) => text.startsWith(prefix) && text.length > prefix.length, `expected an id starting with "${prefix}"`));
}

export const NAMING_BASE = /^[a-z][a-z0-9-]*$/;
const DNS_LABEL = '[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?';
export const DNS_NAME = new RegExp(`^(?=.{1,253}$)${DNS_LABEL}(?:\\.${DNS_LABEL})*$`, 'i');

export const HANDLERS = ['log', 'ec2', 'spool', 'notify'] as const;
export const PLATFORM_KINDS = ['simulated', 'openshift-broker'] as const;
export const CANDIDATE_STRATEGIES = ['least-disruption', 'least-gears', 'least-utilized', 'oldest', 'newest'] as const;
export const VOLUME_TYPES = ['gp3', 'gp2', 'io1', 'io2', 'st1'] as const;

/**
 * Builds the schema, on first use: building these few hundred zod objects
 * costs about 20 ms in a fresh process, which a command that never reads a
 * configuration file need not pay. (A deployed function does not hold it at
 * all: lib/config/parse.ts.)
 */
function buildConfigSchema() {
  const fraction = z.number().check(z.gte(0), z.lte(1));
  const nonEmpty = z.string().check(z.minLength(1, 'must not be empty'));
  const int = (min: number, max?: number) => z.int().check(z.gte(min), ...(max === undefined ? [] : [z.lte(max)]));
  const positive = z.number().check(z.gt(0));

  /** Part of a pool id: non-empty and without `/` (a pool id is `district/profile`). */
  const poolIdPart = nonEmpty.check(z.refine((text) => !text.includes('/'), 'must not contain "/" (a pool id is district/profile)'));

  /** Host names are `<base>-<N>.<domain>`: the base plus a counter must stay one DNS label. */
  const namingBase = z
    .string()
    .check(
      z.regex(NAMING_BASE, 'must start with a lowercase letter and hold only a-z, 0-9 and "-"'),
      z.maxLength(40, 'must be at most 40 characters (host names are <base>-<N>.<domain>)'),
    );
  const namingDomain = z.string().check(z.regex(DNS_NAME, 'must be a valid DNS name such as example.com'));

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

  const forecastSchema = z.strictObject({
    enabled: z._default(z.boolean(), true),
    /** How much history the trend uses. */
    window: dur('30m', { positive: true }),
    /** How far ahead to look; unset = the boot delay of a new node. */
    lookahead: z.optional(duration()),
    dailySeasonality: z._default(z.boolean(), true),
    /** Assumed time from a scale-up decision to a node taking gears, until one has been observed. */
    bootDelay: dur('3m', { positive: true }),
  });

  const scaleUpSchema = z.strictObject({
    // Gear slots are a hard, known capacity (max_active_gears), so pools run full: the forecast and
    // headroomGears, not a wide margin, keep room for what comes during a boot (tuned on the Azure 2019 replay).
    threshold: z._default(fraction, 0.98),
    target: z._default(fraction, 0.96),
    sustain: dur('2m'),
    headroomGears: z._default(int(0), 30),
    /** Headroom sized from the pool's history (lib/domain/headroom.ts) instead of headroomGears, once it covers minHistory. */
    observedHeadroom: z.prefault(
      z.strictObject({
        enabled: z._default(z.boolean(), true),
        /** Quantile of the rises above the previous hour's highest demand within one boot delay. */
        quantile: z._default(fraction, 0.95),
        /** History needed (measured rises, one per 5 minutes) before it replaces headroomGears. */
        minHistory: dur('6h', { positive: true }),
      }),
      {},
    ),
    maxNodeProvisionTime: dur('15m', { positive: true }),
    /**
     * A pool full again after a full-pool scale-up doubles (lib/domain/scale-up.ts); false: it adds what it sees, round
     * after round. Off by default: on the whole suite it cut waiting on 5x bursts but cost node-hours and moves on the
     * daily cycles (README, "The trace suite"); a pool whose gears arrive in bursts may turn it on.
     */
    doubleWhenFull: z._default(z.boolean(), false),
    /** Most nodes one decision adds: a count, or a share of the pool ("10%", rounded up); unset: 10. */
    maxNodesPerDecision: z.optional(countOrPercent()),
    forecast: z.prefault(forecastSchema, {}),
    /** How long the provisioner skips an offering (instance type in a subnet) that had no capacity. */
    offeringUnavailableFor: dur('3m', { positive: true }),
    /** First backoff once every offering of a pool failed; doubles on each consecutive exhaustion. */
    exhaustedBackoff: dur('5m', { positive: true }),
    /** Longest exhaustion backoff. */
    exhaustedBackoffMax: dur('30m', { positive: true }),
  });

  const cloudRetrySchema = z.strictObject({
    /** Attempts of one cloud or DNS call that is throttled or failing transiently, the first included. */
    attempts: z._default(int(1, 10), 4),
    /** Backoff before the second attempt; doubles per attempt, with full jitter. */
    baseDelay: dur('500ms', { positive: true }),
    /** Longest backoff between two attempts. */
    maxDelay: dur('8s', { positive: true }),
  });

  /** When a drain pays (lib/domain/payoff.ts): its expected saving against the tenant restarts it costs. */
  const payoffSchema = z.strictObject({
    enabled: z._default(z.boolean(), true),
    /** The saving must be at least this many times the disruption cost (Karpenter's Balanced policy uses 2). */
    factor: z._default(z.number().check(z.gte(0)), 2),
    /** A node the forecast needs again sooner than this is not drained. */
    horizon: dur('4h'),
    /** How far ahead the saving is counted (at most a day: each kept day of demand covers the coming 24 hours). */
    lookahead: z.prefault(duration({ positive: true }).check(z.refine((ms) => ms <= 86_400_000, 'must be at most 24h')), '24h'),
    /** What one node-hour costs, in dollars (m5.xlarge on-demand, us-east-1). */
    nodeHourPrice: z._default(z.number().check(z.gte(0)), 0.192),
    /** Cost of one move, in dollars, by what it restarts; gears whose kind the node does not report count as `disruptive`. */
    moveCost: z.prefault(
      z.strictObject({
        idle: z._default(z.number().check(z.gte(0)), 0),
        // Chosen on the whole replay suite (8 traces): at these weights a node of about 90 gears pays only when it stays
        // unneeded about 11 hours, so nights and weekends are drained and short dips are not (0.002 / 0.01 moved 1.5-6.6x clairvoyant-4h).
        sibling: z._default(z.number().check(z.gte(0)), 0.006),
        disruptive: z._default(z.number().check(z.gte(0)), 0.03),
      }),
      {},
    ),
    /** Scale-down judges demand by this quantile of the last `confidenceWindow`, not by the newest sample. */
    confidenceWindow: dur('1h', { positive: true }),
    confidenceQuantile: z._default(fraction, 0.95),
    /** Close the next node to drain to new gears early, so departing gears empty it (lib/domain/attrition.ts). */
    attrition: z._default(z.boolean(), true),
  });

  const scaleDownSchema = z.strictObject({
    enabled: z._default(z.boolean(), true),
    utilizationThreshold: z._default(fraction, 0.93),
    unneededTime: dur('5m'),
    delayAfterAdd: dur('10m'),
    delayAfterDelete: dur('5m'),
    delayAfterFailure: dur('30s'),
    /** The old name of budget.maxDraining (a count); unset: the budget's. */
    maxConcurrentDrains: z.optional(int(1)),
    maxConcurrentMoves: z._default(int(1), 3),
    drainTimeout: dur('30m', { positive: true }),
    /** Attempts of one gear move before the drain gives up on that gear (and aborts). */
    moveAttempts: z._default(int(1, 10), 3),
    /** Backoff before a failed move is tried again; doubles per attempt (capped at 10x). */
    moveRetryDelay: dur('30s'),
    /** `preferred`: gears of one application go to different nodes when there is room; `required`: a drain that cannot keep them apart aborts. */
    antiAffinity: z._default(z.enum(['preferred', 'required']), 'preferred'),
    /** How often an invocation checks moves in flight while it has time left. */
    movePollInterval: dur('5s', { positive: true }),
    /** Request a replacement node (through the pool lease, as the evaluator does) when an interrupted node's gears do not fit elsewhere. */
    replaceInterrupted: z._default(z.boolean(), true),
    candidateStrategy: z._default(z.enum(CANDIDATE_STRATEGIES), 'least-disruption'),
    payoff: z.prefault(payoffSchema, {}),
    /** The disruption budget (lib/config/budget-schema.ts); a pool's `budget` overrides it key by key. */
    budget: z.prefault(budgetSchema(), {}),
  });

  const namingSchema = z.strictObject({
    base: z._default(namingBase, 'node'),
    domain: z._default(namingDomain, 'example.com'),
  });

  /** A pool's own naming; a key left out falls back to the top-level `naming`. */
  const poolNamingSchema = z.strictObject({
    base: z.optional(namingBase),
    domain: z.optional(namingDomain),
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

  const launchTemplateSchema = z
    .strictObject({
      id: z.optional(awsId('lt-')),
      name: z.optional(nonEmpty),
      /** `$Latest`, `$Default` or a version number. */
      version: z._default(
        z.union([z.pipe(int(1), z.transform(String)), z.string().check(z.regex(/^(?:\$Latest|\$Default|[1-9]\d*)$/))], {
          error: 'expected $Latest, $Default or a version number',
        }),
        '$Latest',
      ),
    })
    .check(
      z.superRefine((template, ctx) => {
        if ((template.id === undefined) === (template.name === undefined)) {
          ctx.addIssue({ code: 'custom', message: 'give exactly one of id or name' });
        }
      }),
    );

  const instanceTypeSchema = z.strictObject({
    name: nonEmpty,
    vcpus: int(1),
    memoryGiB: positive,
  });

  const volumeSchema = z
    .strictObject({
      sizeGiB: z._default(int(1), 50),
      type: z._default(z.enum(VOLUME_TYPES), 'gp3'),
      /** Provisioned IOPS; required by io1 and io2. */
      iops: z.optional(int(100)),
      device: z._default(z.string().check(z.regex(/^\/dev\/[a-z0-9]+$/, 'expected a device such as /dev/xvdc')), '/dev/xvdc'),
    })
    .check(
      z.superRefine((volume, ctx) => {
        if ((volume.type === 'io1' || volume.type === 'io2') && volume.iops === undefined) {
          ctx.addIssue({ code: 'custom', path: ['iops'], message: `volume type ${volume.type} needs iops` });
        }
        if (volume.type === 'st1' && volume.sizeGiB < 125) {
          ctx.addIssue({ code: 'custom', path: ['sizeGiB'], message: 'st1 volumes must be at least 125 GiB', input: volume.sizeGiB });
        }
      }),
    );

  const INSTANCE_PROFILE_ARN = /^arn:aws[a-z-]*:iam::\d{12}:instance-profile\/.+$/;

  const templateSchema = z.strictObject({
    launchTemplate: z.optional(launchTemplateSchema),
    imageId: z.optional(awsId('ami-')),
    /** Candidate instance types, in order of preference; at least one with handler ec2. */
    instanceTypes: z._default(z.array(instanceTypeSchema), []),
    subnets: z._default(z.array(awsId('subnet-')), []),
    securityGroups: z._default(z.array(awsId('sg-')), []),
    /** Instance profile name, or its ARN. */
    instanceProfile: z.optional(
      nonEmpty.check(z.refine((text) => !text.startsWith('arn:') || INSTANCE_PROFILE_ARN.test(text), 'must be a name or an instance-profile ARN')),
    ),
    keyName: z.optional(nonEmpty),
    /** Extra shell appended to the user data nodescaler writes. */
    userData: z.optional(z.string()),
    volume: z.optional(volumeSchema),
    tags: z._default(
      z.record(
        z
          .string()
          .check(
            z.minLength(1, 'tag keys must not be empty'),
            z.maxLength(128),
            z.refine((key) => !key.toLowerCase().startsWith('aws:'), 'tag keys starting with "aws:" are reserved'),
          ),
        z.string().check(z.maxLength(256)),
      ),
      {},
    ),
    spot: z._default(z.boolean(), false),
  });

  const scheduleSchema = z.strictObject({
    cron: z.string().check(
      z.superRefine((text, ctx) => {
        const cron = parseCron(text);
        if (typeof cron === 'string') ctx.addIssue({ code: 'custom', message: `invalid cron (UTC minute hour day month weekday): ${cron}`, input: text });
      }),
    ),
    min: int(0),
    for: z.pipe(
      duration({ positive: true }),
      z.number().check(z.lte(MAX_SCHEDULE_DURATION, 'must be at most 7d')),
    ),
  });

  const poolSchema = z.strictObject({
    district: poolIdPart,
    profile: poolIdPart,
    min: z._default(int(0), 0),
    max: int(1),
    /** Expected max_active_gears of one node, used by planning before a node reports. */
    gearsPerNode: z.optional(int(1)),
    /** Node ids never chosen for scale-down and never terminated. */
    protectedNodes: z._default(z.array(nonEmpty), []),
    naming: z.optional(poolNamingSchema),
    template: z.prefault(templateSchema, {}),
    /** `shadow`: decide and log what would be done, never act; unset: the top-level `mode`. */
    mode: z.optional(z.enum(MODES)),
    /** Scheduled capacity: `min` raised for `for` from each time `cron` (UTC) matches, ahead of known peaks. */
    schedules: z._default(z.array(scheduleSchema), []),
    /** This pool's disruption budget: each key given replaces scaleDown.budget's. */
    budget: z.optional(poolBudgetSchema()),
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
