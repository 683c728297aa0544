/**
 * The deployment settings are validated without zod (lib/config/load.ts: it
 * runs at every cold start). This checks them against the zod schema they
 * replaced, kept here verbatim: the same output, the same issues (path,
 * message, value), for valid and invalid environments.
 */
import { describe, expect, it } from 'vitest';
import { regexes } from 'zod/v4/core';
import { ValidationError } from '../../lib/errors.js';
import { DEPLOYMENT_ENV, ISO_DATETIME_WITH_OFFSET, deploymentFieldProblem, parseDeployment } from '../../lib/config/load.js';
import { issuesFromZod, requiredMessage } from '../../lib/validation.js';
import * as z from '../../lib/zod.js';

function isJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

const queueUrl = z.url({ error: 'expected a queue URL such as https://sqs.us-east-1.amazonaws.com/123456789012/name' });


const zodDeploymentSchema = z.strictObject({
  stage: z._default(z.string().check(z.regex(/^[a-zA-Z0-9-]{1,40}$/, 'expected letters, digits and "-" (a Serverless stage name)')), 'local'),
  region: z._default(z.string().check(z.regex(/^[a-z]{2}(?:-[a-z]+)+-\d+$/, 'expected an AWS region such as us-east-1')), 'us-east-1'),
  tableName: z._default(
    z.string().check(z.regex(/^[a-zA-Z0-9_.-]{3,255}$/, 'expected a DynamoDB table name: 3-255 of a-z, A-Z, 0-9, "_", "-", "."')),
    'nodescaler-local-state',
  ),
  queues: z.prefault(
    z.strictObject({
      stats: z.optional(queueUrl),
      scale: z.optional(queueUrl),
      drain: z.optional(queueUrl),
      decommission: z.optional(queueUrl),
    }),
    {},
  ),
  /** DynamoDB endpoint override (dynalite in tests and the local runtime); unset = the regional endpoint. */
  dynamodbEndpoint: z.optional(z.url({ protocol: /^https?$/ })),
  /** Powertools log level. */
  logLevel: z._default(z.enum(['DEBUG', 'INFO', 'WARN', 'ERROR', 'SILENT']), 'INFO'),
  /** Path of a YAML or JSON configuration file, relative to the working directory. */
  configFile: z.optional(z.string().check(z.minLength(1))),
  /** The whole configuration as inline JSON; wins over `configFile`. */
  configJson: z.optional(z.string().check(z.refine(isJson, 'must be valid JSON'))),
  /**
   * Local runs only (`npm run invoke`, stage `local`): the directory of the
   * embedded state that successive invocations share (dynalite, queue files,
   * simulated platform). Never set in a deployed function.
   */
  localStateDir: z.optional(z.string().check(z.minLength(1))),
  /** Local runs only: the instant the local clock starts at (ISO 8601); unset = the system clock. */
  localNow: z.optional(z.iso.datetime({ offset: true, error: 'expected an ISO 8601 time such as 2026-11-21T10:00:30Z' })),
});

/** What parseDeployment answered before, with the zod schema. */
function zodParse(env: Record<string, string | undefined>) {
  const input: Record<string, unknown> = {};
  for (const [field, name] of Object.entries(DEPLOYMENT_ENV)) {
    const value = env[name];
    if (value === undefined || value === '') continue;
    const [head, leaf] = field.split('.') as [string, string | undefined];
    if (leaf === undefined) input[head] = value;
    else ((input[head] ??= {}) as Record<string, unknown>)[leaf] = value;
  }
  const result = zodDeploymentSchema.safeParse(input, { error: requiredMessage });
  if (result.success) return { ok: true, value: result.data };
  const issues = issuesFromZod(result.error, input).map((issue) => {
    const name = (DEPLOYMENT_ENV as Record<string, string>)[issue.path];
    return { ...issue, path: name ? `env.${name}` : `env.${issue.path}` };
  });
  return { ok: false, issues };
}

function plainParse(env: Record<string, string | undefined>) {
  try {
    return { ok: true, value: parseDeployment(env) };
  } catch (error) {
    if (!(error instanceof ValidationError)) throw error;
    return { ok: false, issues: error.issues };
  }
}

const QUEUES = ['NODESCALER_STATS_QUEUE_URL', 'NODESCALER_SCALE_QUEUE_URL', 'NODESCALER_DRAIN_QUEUE_URL', 'NODESCALER_DECOMMISSION_QUEUE_URL'];
const URLS = [
  'https://sqs.us-east-1.amazonaws.com/123456789012/stats',
  '  https://sqs.eu-west-1.amazonaws.com/1/x  ',
  'https://exa\tmple.com/q',
  'http://127.0.0.1:8000',
  'HTTP://LOCALHOST:4566',
  'http:example.com',
  'https:/path',
  'ftp://example.com/x',
  'file:///tmp/q',
  'mailto:x@example.com',
  'stats',
  'http://',
  'http://exa mple.com',
  ' ',
];
const VALUES: Record<string, string[]> = {
  NODESCALER_STAGE: ['prod', 'my-stage-1', 'a'.repeat(40), 'a'.repeat(41), 'pr od', 'prod_1'],
  AWS_REGION: ['us-east-1', 'eu-central-2', 'us-gov-west-1', 'mars', 'US-EAST-1', 'us-east-'],
  NODESCALER_TABLE: ['nodescaler-prod-state', 'x', 'abc', 'a.b_c-d', 'no space', 'a'.repeat(256)],
  NODESCALER_DYNAMODB_ENDPOINT: URLS,
  NODESCALER_LOG_LEVEL: ['DEBUG', 'INFO', 'WARN', 'ERROR', 'SILENT', 'info', 'TRACE'],
  NODESCALER_CONFIG_FILE: ['conf/stage.yml', ' '],
  NODESCALER_CONFIG: ['{"pools":[]}', '{pools:', '1', 'null', ' '],
  NODESCALER_LOCAL_STATE_DIR: ['.nodescaler/local'],
  NODESCALER_LOCAL_NOW: [
    '2026-11-21T10:00:30Z',
    '2026-11-21T10:00:30.123+02:00',
    '2026-11-21T10:00Z',
    '2026-11-21',
    '2024-02-29T00:00:00Z',
    '2026-02-29T00:00:00Z',
    '2026-11-21T24:00:00Z',
    '2026-11-21T10:00:30+24:00',
    'yesterday',
  ],
};
for (const queue of QUEUES) VALUES[queue] = URLS;

describe('deployment settings without zod', () => {
  it('takes the pattern of z.iso.datetime({ offset: true })', () => {
    expect(ISO_DATETIME_WITH_OFFSET.source).toBe(regexes.datetime({ offset: true }).source);
  });

  it('answers every environment variable value as the zod schema did', () => {
    expect(plainParse({})).toStrictEqual(zodParse({}));
    for (const [name, values] of Object.entries(VALUES)) {
      for (const value of values) {
        const env = { [name]: value };
        expect({ env, ...plainParse(env) }).toStrictEqual({ env, ...zodParse(env) });
      }
    }
  });

  it('lists several problems in the order the zod schema did', () => {
    const env: Record<string, string> = {};
    for (const [name, values] of Object.entries(VALUES)) env[name] = values[values.length - 1]!;
    expect(plainParse(env)).toStrictEqual(zodParse(env));
    const good: Record<string, string> = {};
    for (const [name, values] of Object.entries(VALUES)) good[name] = values[0]!;
    expect(plainParse(good)).toStrictEqual(zodParse(good));
    expect(plainParse(good).ok).toBe(true);
  });

  it('checks one field for the CLI as the zod field schema did', () => {
    for (const [field, name] of [['stage', 'NODESCALER_STAGE'], ['region', 'AWS_REGION'], ['tableName', 'NODESCALER_TABLE']] as const) {
      for (const value of VALUES[name]!) {
        const result = zodDeploymentSchema.shape[field].safeParse(value);
        expect(deploymentFieldProblem(field, value)).toBe(result.success ? undefined : result.error.issues[0]?.message);
      }
    }
  });
});
