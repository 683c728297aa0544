/**
 * Loading the deployment settings and the configuration of this process.
 *
 * Every failure is one `ValidationError` that lists every problem with its
 * path and the value found there, so a wrong environment fails at cold start
 * with everything to fix in one message.
 */
import { resolve } from 'node:path';
import { ValidationError } from '../errors.js';
import { issuesFromZod, requiredMessage } from '../validation.js';
import * as z from '../zod.js';
import { parseCliEnvironment, type CliEnvironment } from './cli-env.js';
import { packagedConfiguration, type PackagedConfiguration } from './packaged.js';
import { parseConfig, readConfigFile } from './parse.js';
import type { Config } from './schema.js';

/** Loaded when the environment names no configuration; relative to the working directory. */
export const DEFAULT_CONFIG_FILE = 'infra/nodescaler.example.yml';

// ---------------------------------------------------------------------------
// Deployment settings: where this stage's table and queues are, and where
// the configuration comes from. They arrive through the environment.

const queueUrl = z.url({ error: 'expected a queue URL such as https://sqs.us-east-1.amazonaws.com/123456789012/name' });

function isJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

export const deploymentSchema = z.strictObject({
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

export type Deployment = z.output<typeof deploymentSchema>;

export interface Settings {
  config: Config;
  deployment: Deployment;
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
  const result = deploymentSchema.safeParse(input, { error: requiredMessage });
  if (result.success) return result.data;
  const issues = issuesFromZod(result.error, input).map((issue) => {
    const name = (DEPLOYMENT_ENV as Record<string, string>)[issue.path];
    return { ...issue, path: name ? `env.${name}` : `env.${issue.path}` };
  });
  throw new ValidationError(issues, 'environment');
}

/**
 * Deployment settings and configuration from an environment. The configuration
 * comes from NODESCALER_CONFIG (inline JSON), else NODESCALER_CONFIG_FILE, else
 * the configuration packaged in a Lambda bundle (`options.packaged`), else
 * `infra/nodescaler.example.yml`; relative paths resolve against `cwd`.
 */
export function loadSettings(env: Record<string, string | undefined>, options: { cwd?: string; packaged?: PackagedConfiguration } = {}): Settings {
  const deployment = parseDeployment(env);
  const cwd = options.cwd ?? process.cwd();
  let config: Config;
  if (deployment.configJson !== undefined) {
    config = parseConfig(JSON.parse(deployment.configJson), `configuration ${DEPLOYMENT_ENV.configJson}`);
  } else if (deployment.configFile !== undefined) {
    config = readConfigFile(resolve(cwd, deployment.configFile));
  } else if (options.packaged !== undefined) {
    // Read and validated by lib/config/parse.ts when the stage was packaged (lib/config/packaged.ts).
    config = options.packaged.config;
  } else {
    config = readConfigFile(resolve(cwd, DEFAULT_CONFIG_FILE));
  }
  return { config, deployment };
}

let cached: Settings | undefined;

/**
 * The settings of this process, loaded once per cold start. The ONLY place in
 * the code base that reads `process.env`: everything else receives settings.
 */
export function loadSettingsFromProcess(): Settings {
  cached ??= loadSettings(process.env, { packaged: packagedConfiguration });
  return cached;
}

/**
 * The operator CLI's environment (lib/cli/): deployment variables, whether
 * AWS settings are present, NO_COLOR / FORCE_COLOR / COLUMNS. Read here, like
 * every other variable; parsed by `parseCliEnvironment` (cli-env.ts).
 */
export function loadCliEnvironmentFromProcess(): CliEnvironment {
  return parseCliEnvironment(process.env);
}

/** Forgets the cached settings, so a test can load a new environment into the same module instance. */
export function resetSettingsCache(): void {
  cached = undefined;
}
