/**
 * The deployment settings: where this stage's table and queues are, and where
 * the configuration comes from. Read from the environment by load.ts (the
 * functions) and cli-env.ts (the operator CLI).
 */
import { ValidationError, type ValidationIssue } from '../errors.js';

// ---------------------------------------------------------------------------
// Deployment settings: where this stage's table and queues are, and where
// the configuration comes from. They arrive through the environment.
//
// One schema, `deploymentSchema`: a rule per field, in the order issues are
// listed. Written without zod because it runs at every cold start and these
// are a dozen strings: zod's module and schema construction were about a
// tenth of a Lambda function's load time (docs/BENCHMARKS.md, "Cold start"). The rules
// and messages are zod's for the same schema (`z.url`, `z.iso.datetime`,
// `z.enum` with its English messages), which test/unit/config.test.ts checks.

/** One field's rule: the value it outputs (a URL trimmed, say), or the problem, worded as zod words it. */
type FieldRule = (input: unknown) => { ok: true; value: unknown } | { ok: false; message: string };

const valid = (value: unknown) => ({ ok: true as const, value });
const invalid = (message: string) => ({ ok: false as const, message });

/** zod's English message for a value that is not a string. */
function notAString(input: unknown): string {
  const type = input === null ? 'null' : Array.isArray(input) ? 'array' : typeof input === 'number' && Number.isNaN(input) ? 'NaN' : typeof input;
  return `Invalid input: expected string, received ${type}`;
}

function text(check?: (value: string) => string | undefined): FieldRule {
  return (input) => {
    if (typeof input !== 'string') return input === undefined ? invalid('required') : invalid(notAString(input));
    const problem = check?.(input);
    return problem === undefined ? valid(input) : invalid(problem);
  };
}

function matching(pattern: RegExp, message: string): FieldRule {
  return text((value) => (pattern.test(value) ? undefined : message));
}

function canParseUrl(value: string): boolean {
  try {
    new URL(value);
    return true;
  } catch {
    return false;
  }
}

/**
 * `z.url()`: what the URL parser accepts, trimmed, with tabs and newlines
 * removed; with `http`, also zod's guard that the value starts with http:// or
 * https:// and has that protocol.
 */
function url(message: string, options: { http?: boolean } = {}): FieldRule {
  return (input) => {
    if (typeof input !== 'string') return input === undefined ? invalid('required') : invalid(notAString(input));
    const trimmed = input.trim();
    if (options.http && !/^https?:\/\//i.test(trimmed)) return invalid(message);
    if (!canParseUrl(trimmed)) return invalid(message);
    if (options.http && !/^https?$/.test(new URL(trimmed).protocol.replace(/:$/, ''))) return invalid(message);
    return valid(trimmed.replace(/[\t\n\r]/g, ''));
  };
}

/** `z.iso.datetime({ offset: true })`: zod's pattern (regexes.datetime), which test/unit/config.test.ts compares. */
export const ISO_DATETIME_WITH_OFFSET =
  /^(?:(?:\d\d[2468][048]|\d\d[13579][26]|\d\d0[48]|[02468][048]00|[13579][26]00)-02-29|\d{4}-(?:(?:0[13578]|1[02])-(?:0[1-9]|[12]\d|3[01])|(?:0[469]|11)-(?:0[1-9]|[12]\d|30)|(?:02)-(?:0[1-9]|1\d|2[0-8])))T(?:(?:[01]\d|2[0-3]):[0-5]\d:[0-5]\d(?:\.\d+)?(?:Z|([+-](?:[01]\d|2[0-3]):[0-5]\d)))$/;

const LOG_LEVELS = ['DEBUG', 'INFO', 'WARN', 'ERROR', 'SILENT'] as const;

function isJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

const QUEUE_URL = 'expected a queue URL such as https://sqs.us-east-1.amazonaws.com/123456789012/name';

/** A field: its rule, and its default when absent (fields without one are optional). */
interface Field {
  rule: FieldRule;
  default?: string;
}

/** The deployment settings schema: top-level fields, and the queue URLs under `queues`. */
export const deploymentSchema = {
  shape: {
    stage: { rule: matching(/^[a-zA-Z0-9-]{1,40}$/, 'expected letters, digits and "-" (a Serverless stage name)'), default: 'local' },
    region: { rule: matching(/^[a-z]{2}(?:-[a-z]+)+-\d+$/, 'expected an AWS region such as us-east-1'), default: 'us-east-1' },
    tableName: {
      rule: matching(/^[a-zA-Z0-9_.-]{3,255}$/, 'expected a DynamoDB table name: 3-255 of a-z, A-Z, 0-9, "_", "-", "."'),
      default: 'nodescaler-local-state',
    },
    /** DynamoDB endpoint override (dynalite in tests and the local runtime); unset = the regional endpoint. */
    dynamodbEndpoint: { rule: url('Invalid URL', { http: true }) },
    /** The functions' log level (lib/adapters/lambda/logger.ts). */
    logLevel: {
      rule: text((value) =>
        (LOG_LEVELS as readonly string[]).includes(value) ? undefined : `Invalid option: expected one of ${LOG_LEVELS.map((level) => `"${level}"`).join('|')}`,
      ),
      default: 'INFO',
    },
    /** Path of a YAML or JSON configuration file, relative to the working directory. */
    configFile: { rule: text((value) => (value.length >= 1 ? undefined : 'Too small: expected string to have >=1 characters')) },
    /** The whole configuration as inline JSON; wins over `configFile`. */
    configJson: { rule: text((value) => (isJson(value) ? undefined : 'must be valid JSON')) },
    /**
     * Local runs only (`npm run invoke`, stage `local`): the directory of the
     * embedded state that successive invocations share (dynalite, queue files,
     * simulated platform). Never set in a deployed function.
     */
    localStateDir: { rule: text((value) => (value.length >= 1 ? undefined : 'Too small: expected string to have >=1 characters')) },
    /** Local runs only: the instant the local clock starts at (ISO 8601); unset = the system clock. */
    localNow: { rule: matching(ISO_DATETIME_WITH_OFFSET, 'expected an ISO 8601 time such as 2026-11-21T10:00:30Z') },
  } satisfies Record<string, Field>,
  queues: {
    stats: { rule: url(QUEUE_URL) },
    scale: { rule: url(QUEUE_URL) },
    drain: { rule: url(QUEUE_URL) },
    decommission: { rule: url(QUEUE_URL) },
  } satisfies Record<string, Field>,
} as const;

type LogLevel = (typeof LOG_LEVELS)[number];

export interface Deployment {
  stage: string;
  region: string;
  tableName: string;
  queues: { stats?: string; scale?: string; drain?: string; decommission?: string };
  dynamodbEndpoint?: string;
  logLevel: LogLevel;
  configFile?: string;
  configJson?: string;
  localStateDir?: string;
  localNow?: string;
}

/** The problem with one value of a top-level deployment field (the CLI checks its flags with it), or undefined. */
export function deploymentFieldProblem(field: keyof typeof deploymentSchema.shape, value: unknown): string | undefined {
  const result = deploymentSchema.shape[field].rule(value);
  return result.ok ? undefined : result.message;
}

/** Validates a group of fields into `output`, in schema order; issues carry the dotted path. */
function validateFields(
  fields: Record<string, Field>,
  input: Record<string, unknown>,
  prefix: string,
  output: Record<string, unknown>,
  issues: ValidationIssue[],
): void {
  for (const [name, field] of Object.entries(fields)) {
    const present = Object.prototype.hasOwnProperty.call(input, name) && input[name] !== undefined;
    if (!present) {
      if (field.default !== undefined) output[name] = field.default;
      continue;
    }
    const result = field.rule(input[name]);
    if (result.ok) output[name] = result.value;
    else issues.push({ path: prefix + name, message: result.message, value: input[name] });
  }
}

/** Which environment variable feeds which deployment field. */
export const DEPLOYMENT_ENV = {
  stage: 'NODESCALER_STAGE',
  region: 'AWS_REGION',
  tableName: 'NODESCALER_TABLE',
  'queues.stats': 'NODESCALER_STATS_QUEUE_URL',
  'queues.scale': 'NODESCALER_SCALE_QUEUE_URL',
  'queues.drain': 'NODESCALER_DRAIN_QUEUE_URL',
  'queues.decommission': 'NODESCALER_DECOMMISSION_QUEUE_URL',
  dynamodbEndpoint: 'NODESCALER_DYNAMODB_ENDPOINT',
  logLevel: 'NODESCALER_LOG_LEVEL',
  configFile: 'NODESCALER_CONFIG_FILE',
  configJson: 'NODESCALER_CONFIG',
  localStateDir: 'NODESCALER_LOCAL_STATE_DIR',
  localNow: 'NODESCALER_LOCAL_NOW',
} as const;

/** The deployment settings from environment variables; an empty variable counts as unset. */
export function parseDeployment(env: Record<string, string | undefined>): Deployment {
  const input: Record<string, unknown> = {};
  for (const [field, name] of Object.entries(DEPLOYMENT_ENV)) {
    const value = env[name];
    if (value === undefined || value === '') continue;
    const [head, leaf] = field.split('.') as [string, string | undefined];
    if (leaf === undefined) input[head] = value;
    else ((input[head] ??= {}) as Record<string, unknown>)[leaf] = value;
  }
  const output: Record<string, unknown> = {};
  const issues: ValidationIssue[] = [];
  const { shape, queues } = deploymentSchema;
  const { stage, region, tableName, ...rest } = shape;
  validateFields({ stage, region, tableName }, input, '', output, issues);
  const queueOutput: Record<string, unknown> = {};
  validateFields(queues, (input.queues ?? {}) as Record<string, unknown>, 'queues.', queueOutput, issues);
  output.queues = queueOutput;
  validateFields(rest, input, '', output, issues);
  if (issues.length === 0) return output as unknown as Deployment;
  for (const issue of issues) {
    const name = (DEPLOYMENT_ENV as Record<string, string>)[issue.path];
    issue.path = name ? `env.${name}` : `env.${issue.path}`;
  }
  throw new ValidationError(issues, 'environment');
}
