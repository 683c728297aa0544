/**
 * Loading and validating the configuration and the deployment settings.
 *
 * Every failure is one `ValidationError` that lists every problem with its
 * path and the value found there, so a wrong file or environment fails at
 * cold start with everything to fix in one message.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { ValidationError, type ValidationIssue } from '../errors.js';
import { issuesFromZod } from '../validation.js';
import { parseCliEnvironment, type CliEnvironment } from './cli-env.js';
import { packagedConfiguration, type PackagedConfiguration } from './packaged.js';
import { configSchema, type Config } from './schema.js';
import { parseConfigText } from './text.js';
import * as z from '../zod.js';

/** Loaded when the environment names no configuration; relative to the working directory. */
export const DEFAULT_CONFIG_FILE = 'infra/nodescaler.example.yml';

/** Validate a configuration value (parsed YAML or JSON); throws a `ValidationError` listing every problem. */
export function parseConfig(input: unknown, source = 'configuration'): Config {
  const result = configSchema().safeParse(input, { error: requiredMessage });
  if (result.success) return result.data;
  throw new ValidationError(configIssues(result.error, input), source);
}

/** Read, parse (YAML or JSON) and validate a configuration file. */
export function readConfigFile(path: string): Config {
  const source = `configuration ${path}`;
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const why = code === 'ENOENT' ? 'file not found' : code === 'EISDIR' ? 'is a directory, not a file' : `cannot read the file (${code ?? String(error)})`;
    throw new ValidationError({ path: '', message: `${why}: ${resolve(path)}` }, source);
  }
  const value = parseConfigText(text, source);
  if (value === null || value === undefined) {
    throw new ValidationError({ path: '', message: `the file is empty: ${resolve(path)}` }, source);
  }
  return parseConfig(value, source);
}

/** `required` instead of zod's `expected number, received undefined` for a missing key. */
function requiredMessage(issue: z.core.$ZodRawIssue): string | undefined {
  return issue.code === 'invalid_type' && issue.input === undefined ? 'required' : undefined;
}

// ---------------------------------------------------------------------------
// Issues: zod reports unknown keys once per object, at the object's path. An
// operator wants the typo itself named (`scaledown`, not `(root)`), with a
// hint when a known key is close, so those become one issue per key.

/** `issuesFromZod`, with each unknown key reported at its own path. */
export function configIssues(error: z.core.$ZodError, input: unknown): ValidationIssue[] {
  const base = issuesFromZod(error, input);
  return error.issues.flatMap((zodIssue, index) => {
    const mapped = base[index]!;
    if (zodIssue.code !== 'unrecognized_keys') return [mapped];
    const parent = zodIssue.path;
    const known = knownKeys(configSchema(), parent);
    const container = valueAt(input, parent);
    return zodIssue.keys.map((key) => {
      const hint = closest(key, known);
      const issue: ValidationIssue = {
        path: [...parent.map(String), key].join('.'),
        message: hint ? `unknown key (did you mean "${hint}"?)` : 'unknown key',
      };
      if (container && Object.prototype.hasOwnProperty.call(container, key)) issue.value = container[key];
      return issue;
    });
  });
}

function valueAt(input: unknown, path: readonly PropertyKey[]): Record<string, unknown> | undefined {
  let current: unknown = input;
  for (const key of path) {
    if (current === null || typeof current !== 'object') return undefined;
    current = (current as Record<PropertyKey, unknown>)[key];
  }
  return current !== null && typeof current === 'object' ? (current as Record<string, unknown>) : undefined;
}

interface Def {
  type: string;
  shape?: Record<string, { _zod: { def: Def } }>;
  element?: { _zod: { def: Def } };
  innerType?: { _zod: { def: Def } };
  in?: { _zod: { def: Def } };
  valueType?: { _zod: { def: Def } };
}

/** The keys the schema knows at a path (through wrappers, arrays and records). */
function knownKeys(schema: z.core.$ZodType, path: readonly PropertyKey[]): string[] {
  let def = (schema as unknown as { _zod: { def: Def } })._zod.def;
  let rest = [...path];
  for (let guard = 0; guard < 100; guard++) {
    const inner = def.innerType ?? (def.type === 'pipe' ? def.in : undefined);
    if (inner) {
      def = inner._zod.def;
      continue;
    }
    if (rest.length === 0) return def.type === 'object' && def.shape ? Object.keys(def.shape) : [];
    const [key, ...tail] = rest;
    rest = tail;
    const next =
      def.type === 'object' ? def.shape?.[String(key)] : def.type === 'array' ? def.element : def.type === 'record' ? def.valueType : undefined;
    if (!next) return [];
    def = next._zod.def;
  }
  return [];
}

/** The known key a typo most likely meant: same letters in another case, or at most two edits away. */
function closest(key: string, known: readonly string[]): string | undefined {
  const lower = key.toLowerCase();
  let best: { name: string; distance: number } | undefined;
  for (const name of known) {
    const distance = name.toLowerCase() === lower ? 0 : editDistance(lower, name.toLowerCase());
    if (!best || distance < best.distance) best = { name, distance };
  }
  return best && best.distance <= Math.min(2, Math.floor(key.length / 3)) ? best.name : undefined;
}

function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + cost);
    }
    previous = current;
  }
  return previous[b.length]!;
}

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
    // Read and validated by this same module when the stage was packaged (lib/config/packaged.ts).
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
