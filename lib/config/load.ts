/**
 * Loading the deployment settings and the configuration of this process.
 *
 * Every failure is one `ValidationError` that lists every problem with its
 * path and the value found there, so a wrong environment fails at cold start
 * with everything to fix in one message.
 */
import { resolve } from 'node:path';
import { parseCliEnvironment, type CliEnvironment } from './cli-env.js';
import { DEPLOYMENT_ENV, parseDeployment, type Deployment } from './deployment.js';
import { packagedConfiguration, type PackagedConfiguration } from './packaged.js';
import { parseConfig, readConfigFile } from './parse.js';
import type { Config } from './schema.js';

export { DEPLOYMENT_ENV, ISO_DATETIME_WITH_OFFSET, deploymentFieldProblem, deploymentSchema, parseDeployment, type Deployment } from './deployment.js';

/** Loaded when the environment names no configuration; relative to the working directory. */
export const DEFAULT_CONFIG_FILE = 'infra/nodescaler.example.yml';

export interface Settings {
  config: Config;
  deployment: Deployment;
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
