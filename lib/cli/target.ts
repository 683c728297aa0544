/**
 * Where the CLI reads and writes: the deployed state table and drain queue of
 * a stage (named as serverless.yml names them), or the local embedded state
 * that `npm run invoke` keeps (dynalite on LevelDB and queue files under
 * `.nodescaler/`). Local is the default when no AWS setting is present.
 */
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { GetQueueUrlCommand, SQSClient } from '@aws-sdk/client-sqs';
import { awsClientConfig } from '../adapters/aws-clients.js';
import { DynamoDbStateStore } from '../adapters/dynamodb/state-store.js';
import { LocalStateBusyError, startLocalDynamo } from '../adapters/local/dynalite.js';
import { FileQueue } from '../adapters/local/file-queue.js';
import { SqsQueue } from '../adapters/sqs/queue.js';
import { STSClient } from '@aws-sdk/client-sts';
import { LocalUserIdentity } from '../adapters/local/identity.js';
import { StsIdentity } from '../adapters/sts/identity.js';
import type { Identity } from '../ports/identity.js';
import { stageConfigFile } from '../config/stage-file.js';
import { deploymentFieldProblem, readConfigFile, parseConfig, DEPLOYMENT_ENV, type CliEnvironment, type Config } from '../config/index.js';
import type { Clock } from '../ports/clock.js';
import type { OutgoingMessage, Queue, QueueName, SendResult } from '../ports/queue.js';
import type { StateStore } from '../ports/state-store.js';
import { CliError, EXIT, notFound, usageError } from './exit.js';

/** serverless.yml: `service: nodescaler`; the table is `${service}-${stage}-state`, the drain queue `${service}-${stage}-drain.fifo` (infra/queues.yml). */
const SERVICE = 'nodescaler';
/** serverless.yml's provider.stage default. */
export const DEFAULT_DEPLOYED_STAGE = 'dev';
export const DEFAULT_STATE_DIR = '.nodescaler';
/** The local stage's configuration (serverless.yml params.local.configFile). */
export const LOCAL_CONFIG_FILE = 'infra/nodescaler.example.yml';
/** The one table definition (dynalite creates the local table from it). */
export const TABLE_FILE = 'infra/state-table.yml';

export function tableNameOf(stage: string): string {
  return `${SERVICE}-${stage}-state`;
}

export function queueNameOf(stage: string, queue: QueueName): string {
  return `${SERVICE}-${stage}-${queue}${queue === 'scale' || queue === 'drain' ? '.fifo' : ''}`;
}

export interface TargetOptions {
  local?: boolean;
  stateDir?: string;
  stage?: string;
  region?: string;
  table?: string;
  config?: string;
  at?: string;
}

export type TargetSpec =
  | { kind: 'local'; stateDir: string; tableName: string; configFile?: string; configJson?: string }
  | {
      kind: 'deployed';
      stage: string;
      region: string;
      tableName: string;
      /** From NODESCALER_DRAIN_QUEUE_URL; else looked up by name (sqs:GetQueueUrl) when a message is sent. */
      drainQueueUrl?: string;
      dynamodbEndpoint?: string;
      configFile?: string;
      configJson?: string;
      /** Why this target was chosen, when no flag chose it. */
      chosenBy?: string;
    };

/**
 * The target the options and environment name; a usage error for
 * contradictory ones. Paths given by the operator resolve against `cwd`;
 * defaults against `root`, the repository (so the CLI works from any of its
 * directories, and from a bundle that lives elsewhere).
 */
export function resolveTarget(options: TargetOptions, env: CliEnvironment, cwd: string, root: string): TargetSpec {
  const { deployment, set } = env;
  if (options.stage !== undefined) checkField('stage', options.stage, '--stage');
  if (options.region !== undefined) checkField('region', options.region, '--region');
  if (options.table !== undefined) checkField('tableName', options.table, '--table');
  const configFile = options.config !== undefined ? resolve(cwd, options.config) : set.configFile ? resolve(cwd, deployment.configFile!) : undefined;
  const configJson = options.config === undefined ? deployment.configJson : undefined;
  const wantsLocal = options.local === true || options.stateDir !== undefined || options.stage === 'local';
  if (wantsLocal && options.stage !== undefined && options.stage !== 'local') {
    throw usageError(`--local / --state-dir cannot be combined with --stage ${options.stage}`);
  }
  if (wantsLocal && options.region !== undefined) throw usageError('--region names a deployed stack; the local state has none (drop --region or --local)');

  const explicitDeployed = options.stage !== undefined || options.region !== undefined || options.table !== undefined;
  if (wantsLocal || (!explicitDeployed && env.awsSettings.length === 0)) {
    const stateDir =
      options.stateDir !== undefined
        ? resolve(cwd, options.stateDir)
        : set.localStateDir
          ? resolve(cwd, deployment.localStateDir!)
          : join(root, DEFAULT_STATE_DIR);
    return {
      kind: 'local',
      stateDir,
      tableName: options.table ?? deployment.tableName,
      ...(configFile !== undefined ? { configFile } : {}),
      ...(configJson !== undefined ? { configJson } : {}),
    };
  }
  const stage = options.stage ?? (set.stage ? deployment.stage : DEFAULT_DEPLOYED_STAGE);
  return {
    kind: 'deployed',
    stage,
    region: options.region ?? deployment.region,
    tableName: options.table ?? (set.tableName ? deployment.tableName : tableNameOf(stage)),
    ...(deployment.queues.drain !== undefined ? { drainQueueUrl: deployment.queues.drain } : {}),
    ...(deployment.dynamodbEndpoint !== undefined ? { dynamodbEndpoint: deployment.dynamodbEndpoint } : {}),
    ...(configFile !== undefined ? { configFile } : {}),
    ...(configJson !== undefined ? { configJson } : {}),
    ...(explicitDeployed ? {} : { chosenBy: `AWS settings in the environment (${env.awsSettings.join(', ')}); --local for the local state` }),
  };
}

function checkField(field: 'stage' | 'region' | 'tableName', value: string, flag: string): void {
  const problem = deploymentFieldProblem(field, value);
  if (problem !== undefined) throw usageError(`${flag} ${JSON.stringify(value)}: ${problem}`);
}

/** One line naming the target, for headers and for what a change was made to. */
export function describeTarget(spec: TargetSpec): string {
  return spec.kind === 'local' ? `local state ${spec.stateDir}` : `stage ${spec.stage} (${spec.region}, table ${spec.tableName})`;
}

/** The configuration of the target: --config, NODESCALER_CONFIG(_FILE), else the stage's file as serverless.yml packages it. */
export function loadTargetConfig(spec: TargetSpec, root: string): { config: Config; source: string } {
  if (spec.configJson !== undefined) {
    return { config: parseConfig(JSON.parse(spec.configJson), `configuration ${DEPLOYMENT_ENV.configJson}`), source: DEPLOYMENT_ENV.configJson };
  }
  const file = spec.configFile ?? join(root, spec.kind === 'local' ? LOCAL_CONFIG_FILE : stageConfigFile(spec.stage, spec.region, (path) => existsSync(join(root, path))));
  if (spec.configFile === undefined && !existsSync(file)) {
    throw notFound(
      `no configuration for stage ${spec.kind === 'local' ? 'local' : spec.stage}: ${file} does not exist`,
      'name the file the stage was deployed with: --config <file> (or NODESCALER_CONFIG_FILE)',
    );
  }
  return { config: readConfigFile(file), source: file };
}

export interface OpenTarget {
  spec: TargetSpec;
  store: StateStore;
  queue: Queue;
  /** Who runs the command: the AWS principal for a stage, the OS user for the local state (audit entries). */
  identity: Identity;
  /** Where messages to `queue` wait: a file of the local state, or the SQS queue. */
  queueLocation(queue: QueueName): string;
  close(): Promise<void>;
}

/** Opens the state of a target. Local: the state directory must exist (it is `npm run invoke`'s). */
export async function openTarget(spec: TargetSpec, clock: Clock, root: string): Promise<OpenTarget> {
  if (spec.kind === 'local') return openLocal(spec, clock, root);
  const client = new DynamoDBClient(awsClientConfig(spec.region, spec.dynamodbEndpoint ? { endpoint: spec.dynamodbEndpoint } : {}));
  const store = new DynamoDbStateStore(DynamoDbStateStore.documentClient(client), spec.tableName);
  const sqs = new SQSClient(awsClientConfig(spec.region));
  const sts = new STSClient(awsClientConfig(spec.region));
  const queue = new NamedSqsQueue(sqs, spec.stage, spec.drainQueueUrl);
  return {
    spec,
    store,
    queue,
    identity: new StsIdentity(sts),
    queueLocation: (name) => (name === 'drain' && spec.drainQueueUrl ? spec.drainQueueUrl : `SQS queue ${queueNameOf(spec.stage, name)} (${spec.region})`),
    close: async () => {
      client.destroy();
      sqs.destroy();
      sts.destroy();
    },
  };
}

async function openLocal(spec: Extract<TargetSpec, { kind: 'local' }>, clock: Clock, root: string): Promise<OpenTarget> {
  const tableDir = join(spec.stateDir, 'dynamodb');
  if (!existsSync(tableDir)) {
    throw notFound(
      `no local state in ${spec.stateDir}`,
      'npm run invoke creates it (e.g. npm run invoke -- thresholdEvaluator events/node-stats.json --at 2026-11-21T10:00:30Z); or name another with --state-dir, or a deployed stage with --stage',
    );
  }
  let dynamo;
  try {
    dynamo = await startLocalDynamo({ path: tableDir, tableName: spec.tableName, tableFile: join(root, TABLE_FILE) });
  } catch (error) {
    const text = error instanceof Error ? error.message : String(error);
    if (error instanceof LocalStateBusyError) throw new StateBusyError(`cannot open the local state in ${spec.stateDir}: ${text}`);
    throw new CliError(
      EXIT.error,
      `cannot open the local state in ${spec.stateDir}: ${text.split('\n')[0]}`,
      /lock/i.test(text) ? 'another process holds it (an npm run invoke, or a nodescaler --watch): retry when it is done' : undefined,
    );
  }
  const store = new DynamoDbStateStore(DynamoDbStateStore.documentClient(dynamo.client), dynamo.tableName);
  const queue = new FileQueue(join(spec.stateDir, 'queues'), clock);
  return {
    spec,
    store,
    queue,
    identity: new LocalUserIdentity(),
    queueLocation: (name) => queue.fileOf(name),
    close: () => dynamo.close(),
  };
}

/** Another process holds the local state right now; `status --watch` tries again at its next refresh. */
export class StateBusyError extends CliError {
  constructor(message: string) {
    super(EXIT.error, message, 'another process holds it (an npm run invoke, or a nodescaler --watch): retry when it is done');
  }
}

/** SqsQueue whose URLs are looked up by the names serverless.yml gives the stage's queues, on first use. */
class NamedSqsQueue implements Queue {
  private readonly urls = new Map<QueueName, string>();

  constructor(
    private readonly client: SQSClient,
    private readonly stage: string,
    drainUrl: string | undefined,
  ) {
    if (drainUrl) this.urls.set('drain', drainUrl);
  }

  async send(queue: QueueName, messages: readonly OutgoingMessage[]): Promise<SendResult> {
    let url = this.urls.get(queue);
    if (url === undefined) {
      const name = queueNameOf(this.stage, queue);
      try {
        url = (await this.client.send(new GetQueueUrlCommand({ QueueName: name }))).QueueUrl;
      } catch (error) {
        const code = (error as { name?: string }).name ?? '';
        if (code.includes('NonExistentQueue') || code.includes('QueueDoesNotExist')) {
          throw notFound(`queue ${name} not found: is stage ${this.stage} deployed in this region?`, `or set ${DEPLOYMENT_ENV['queues.drain']} to its URL`);
        }
        throw error;
      }
      if (!url) throw notFound(`queue ${name} not found`);
      this.urls.set(queue, url);
    }
    return new SqsQueue(this.client, { [queue]: url }).send(queue, messages);
  }
}

/**
 * The clock of one CLI run: the system clock, or held at `at` (ISO). Held, not started there: "as of this time" must
 * read the same however long the command takes (a busy machine turned "low for 5m15s" into 5m16s).
 */
export function clockAt(at: string | undefined): Clock {
  if (at === undefined) return { now: () => new Date() };
  const start = Date.parse(at);
  if (!Number.isFinite(start) || !/^\d{4}-\d{2}-\d{2}T/.test(at)) throw usageError(`--at ${JSON.stringify(at)}: expected an ISO 8601 time such as 2026-11-21T10:05:00Z`);
  return { now: () => new Date(start) };
}
