export {
  configSchema,
  duration,
  findPoolConfig,
  poolNaming,
  CANDIDATE_STRATEGIES,
  DURATION_MESSAGE,
  HANDLERS,
  PLATFORM_KINDS,
  VOLUME_TYPES,
  type CandidateStrategy,
  type Config,
  type ConfigInput,
  type Handler,
  type InstanceTypeConfig,
  type Naming,
  type NodeTemplate,
  type PoolConfig,
} from './schema.js';
export { configIssues, parseConfig, readConfigFile } from './parse.js';
export {
  deploymentSchema,
  deploymentFieldProblem,
  loadSettings,
  loadSettingsFromProcess,
  loadCliEnvironmentFromProcess,
  resetSettingsCache,
  parseDeployment,
  DEFAULT_CONFIG_FILE,
  DEPLOYMENT_ENV,
  type Deployment,
  type Settings,
} from './load.js';
export { parseCliEnvironment, AWS_SETTING_VARIABLES, type CliEnvironment } from './cli-env.js';
