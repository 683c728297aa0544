/**
 * The `pools` section of the configuration schema (schema.ts): one entry a
 * district/profile, with its bounds, naming, node template (what the ec2
 * handler launches), schedules and disruption budget.
 */
import { MODES } from '../domain/controls.js';
import { MAX_SCHEDULE_DURATION, parseCron } from '../domain/schedule.js';
import * as z from '../zod.js';
import { poolBudgetSchema } from './budget-schema.js';
import { awsId, duration, expiryDuration, primitives } from './schema-primitives.js';

export const VOLUME_TYPES = ['gp3', 'gp2', 'io1', 'io2', 'st1'] as const;

export function buildPoolSchema() {
  const { nonEmpty, int, positive, poolIdPart, namingBase, namingDomain } = primitives();

  /** A pool's own naming; a key left out falls back to the top-level `naming`. */
  const poolNamingSchema = z.strictObject({
    base: z.optional(namingBase),
    domain: z.optional(namingDomain),
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

  /** A region's or zone's name: what origin-server accepts (REGION_NAME_REGEX) and the broker document lets through. */
  const regionPart = z.string().check(z.regex(/^(?=.*[A-Za-z0-9])[A-Za-z0-9._-]{1,64}$/, 'must be 1 to 64 letters, digits, ".", "_" or "-" (the names oo-admin-ctl-region accepts)'));
  const openshiftRegionSchema = z.strictObject({
    name: regionPart,
    zone: z.optional(regionPart),
    zones: z.optional(z.record(z.string().check(z.minLength(1, 'must not be empty')), regionPart)),
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
    /** What one of this pool's node-hours costs, in dollars, for the pays-off check; unset: scaleDown.payoff.nodeHourPrice, then the market's (node-price.ts). */
    nodeHourPrice: z.optional(z.number().check(z.gte(0))),
    /**
     * What a restart of this pool's tenants costs the pays-off check, in dollars a move by kind; each key given replaces
     * scaleDown.payoff.moveCost's (a paid tier whose applications never idle and carry an SLA, beside a free tier's).
     */
    moveCost: z.optional(
      z.strictObject({
        idle: z.optional(z.number().check(z.gte(0))),
        sibling: z.optional(z.number().check(z.gte(0))),
        disruptive: z.optional(z.number().check(z.gte(0))),
      }),
    ),
    /** How long this pool's nodes may live before they are renewed, or `never`; unset: scaleDown.expireAfter (lib/domain/expiry.ts). */
    expireAfter: z.optional(expiryDuration()),
    /** This pool's disruption budget: each key given replaces scaleDown.budget's. */
    budget: z.optional(poolBudgetSchema()),
    /** The broker region (and zone per availability zone) every node the pool adds is placed in (lib/domain/placement.ts). */
    openshiftRegion: z.optional(openshiftRegionSchema),
  });

  return poolSchema;
}
