/**
 * The operator CLI's environment (`nodescaler`, lib/cli/): the deployment
 * variables the functions read (parsed by `parseDeployment`, so a wrong value
 * fails the same way), whether the variables were set at all (the CLI
 * targets the deployed table only when some AWS setting is present), and the
 * terminal conventions (NO_COLOR, FORCE_COLOR, COLUMNS).
 *
 * Pure: it takes the environment as a record. `loadCliEnvironmentFromProcess`
 * in load.ts is the one call that hands it `process.env`.
 */
import * as z from '../zod.js';
import { ValidationError } from '../errors.js';
import { DEPLOYMENT_ENV, parseDeployment, type Deployment } from './deployment.js';

/** Variables that say "a deployed stack is meant": any of them makes the deployed table the default target. */
export const AWS_SETTING_VARIABLES = [
  'NODESCALER_STAGE',
  'NODESCALER_TABLE',
  'AWS_PROFILE',
  'AWS_ACCESS_KEY_ID',
  'AWS_WEB_IDENTITY_TOKEN_FILE',
  'AWS_CONTAINER_CREDENTIALS_FULL_URI',
  'AWS_CONTAINER_CREDENTIALS_RELATIVE_URI',
] as const;

export interface CliEnvironment {
  /** The deployment settings, with their defaults (stage `local`, region `us-east-1`, table `nodescaler-local-state`). */
  deployment: Deployment;
  /** Which deployment fields the environment set (a default is not a setting). */
  set: { stage: boolean; region: boolean; tableName: boolean; configFile: boolean; localStateDir: boolean; localNow: boolean };
  /** The AWS settings present (names of variables), empty when none: then the local embedded state is the default target. */
  awsSettings: string[];
  /** NO_COLOR set to anything non-empty (https://no-color.org). */
  noColor: boolean;
  /** FORCE_COLOR set to anything but `0` / `false` / empty: colour even when stdout is not a terminal. */
  forceColor: boolean;
  /** COLUMNS: the width to fit tables into when stdout is not a terminal. */
  columns?: number;
}

/** Built when COLUMNS is read (the CLI), not when a Lambda function loads this module with the rest of lib/config. */
const columnsSchema = () => z.coerce.number().check(z.int(), z.gte(20), z.lte(10_000));

export function parseCliEnvironment(env: Record<string, string | undefined>): CliEnvironment {
  const present = (name: string) => env[name] !== undefined && env[name] !== '';
  const deployment = parseDeployment({ ...env, ...(present(DEPLOYMENT_ENV.region) ? {} : regionFallback(env)) });
  const awsSettings = AWS_SETTING_VARIABLES.filter((name) => present(name) && !(name === 'NODESCALER_STAGE' && env[name] === 'local'));
  let columns: number | undefined;
  if (present('COLUMNS')) {
    const parsed = columnsSchema().safeParse(env.COLUMNS);
    if (!parsed.success) throw new ValidationError({ path: 'env.COLUMNS', message: 'expected a whole number of columns from 20 to 10000', value: env.COLUMNS }, 'environment');
    columns = parsed.data;
  }
  const force = env.FORCE_COLOR;
  return {
    deployment,
    set: {
      stage: present(DEPLOYMENT_ENV.stage),
      region: present(DEPLOYMENT_ENV.region) || present('AWS_DEFAULT_REGION'),
      tableName: present(DEPLOYMENT_ENV.tableName),
      configFile: present(DEPLOYMENT_ENV.configFile),
      localStateDir: present(DEPLOYMENT_ENV.localStateDir),
      localNow: present(DEPLOYMENT_ENV.localNow),
    },
    awsSettings,
    noColor: present('NO_COLOR'),
    forceColor: force !== undefined && force !== '' && force !== '0' && force.toLowerCase() !== 'false',
    ...(columns !== undefined ? { columns } : {}),
  };
}

/** The AWS CLI's AWS_DEFAULT_REGION when AWS_REGION is not set. */
function regionFallback(env: Record<string, string | undefined>): Record<string, string> {
  const region = env.AWS_DEFAULT_REGION;
  return region ? { [DEPLOYMENT_ENV.region]: region } : {};
}
