/**
 * `npm run invoke` (serverless invoke local, stage `local`): the real handlers
 * run against embedded state kept in a directory, so a sequence of
 * invocations builds on the previous ones with no AWS account:
 *
 *   <dir>/dynamodb/      the state table, in dynalite (DynamoDB wire protocol) on LevelDB
 *   <dir>/queues/*.json  each queue's pending messages, as an SQS event (file-queue.ts)
 *   <dir>/platform.json  the simulated platform: districts, nodes, gears, moves (persisted-platform.ts)
 *
 * Only the local twins of the handlers (functions/local/) import this module,
 * so neither it nor dynalite is ever in a deployed bundle: a twin opens the
 * local state and builds its handler over it (lib/wiring/local.ts).
 */
import { mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Context, SQSBatchResponse } from 'aws-lambda';
import { loadSettingsFromProcess, DEPLOYMENT_ENV, type Settings } from '../../config/index.js';
import { ValidationError, type ValidationIssue } from '../../errors.js';
import type { Clock } from '../../ports/clock.js';
import { DynamoDbStateStore } from '../dynamodb/state-store.js';
import { startLocalDynamo, type LocalDynamo } from './dynalite.js';
import { FileQueue, type SettleSummary } from './file-queue.js';
import { PersistedPlatform } from './persisted-platform.js';
import { localHandlerOf, type LocalFunctionName } from '../../wiring/local.js';

/** Relative to the working directory; `serverless invoke local` runs in the build directory, where the stage's files are copied. */
export const LOCAL_TABLE_FILE = 'infra/state-table.yml';

export interface LocalState {
  dir: string;
  ports: { queue: FileQueue; clock: Clock; store: DynamoDbStateStore; platform: PersistedPlatform };
  /** Applies an invocation's outcome (its partial batch response, or `undefined` if it threw) to the local queue files. */
  settle(event: unknown, result: unknown): SettleSummary | undefined;
  close(): Promise<void>;
}

/** A clock that starts at `start` and then runs at real speed. */
export function clockFrom(start: Date | undefined): Clock {
  if (start === undefined) return { now: () => new Date() };
  const offset = start.getTime() - Date.now();
  return { now: () => new Date(Date.now() + offset) };
}

/**
 * Opens the embedded state named by the settings (`NODESCALER_LOCAL_STATE_DIR`)
 * and builds its ports. Refuses any
 * configuration that would reach a real cloud or platform: local runs use the
 * `log` handler and the simulated platform.
 */
export async function openLocalState(settings: Settings, options: { tableFile?: string } = {}): Promise<LocalState> {
  const { deployment, config } = settings;
  const issues: ValidationIssue[] = [];
  if (deployment.localStateDir === undefined) {
    issues.push({ path: `env.${DEPLOYMENT_ENV.localStateDir}`, message: 'required by the local stage: run `npm run invoke -- <function> <event file>`' });
  }
  if (config.handler !== 'log') {
    issues.push({ path: 'handler', message: 'local runs use the log handler (no cloud is reachable)', value: config.handler });
  }
  if (config.platform.kind !== 'simulated') {
    issues.push({ path: 'platform.kind', message: 'local runs use the simulated platform', value: config.platform.kind });
  }
  if (issues.length > 0) throw new ValidationError(issues, 'local invocation');

  const dir = resolve(deployment.localStateDir!);
  mkdirSync(resolve(dir, 'dynamodb'), { recursive: true });
  let dynamo: LocalDynamo;
  try {
    dynamo = await startLocalDynamo({
      path: resolve(dir, 'dynamodb'),
      tableName: deployment.tableName,
      tableFile: resolve(options.tableFile ?? LOCAL_TABLE_FILE),
    });
  } catch (error) {
    throw new Error(`cannot open the local state in ${dir} (another invocation using it? delete the directory to start afresh): ${String(error)}`, {
      cause: error,
    });
  }
  const clock = clockFrom(deployment.localNow === undefined ? undefined : new Date(deployment.localNow));
  const store = new DynamoDbStateStore(DynamoDbStateStore.documentClient(dynamo.client), dynamo.tableName);
  const queue = new FileQueue(resolve(dir, 'queues'), clock);
  const platformFile = resolve(dir, 'platform.json');
  let platform: PersistedPlatform;
  try {
    platform = await PersistedPlatform.open(platformFile, store, config, clock);
  } catch (error) {
    await dynamo.close();
    throw error;
  }
  const ports = { store, queue, clock, platform };
  return {
    dir,
    ports,
    settle: (event, result) => queue.settle(event, isBatchResponse(result) ? result : undefined),
    close: async () => {
      try {
        await platform.save(platformFile);
      } finally {
        await dynamo.close();
      }
    },
  };
}

type Handler<E, R> = (event: E, context: Context) => Promise<R>;

/**
 * The local twin of a handler: opens the local state, builds the function's
 * handler over it, runs it, settles the queue file the event came from, and
 * closes the state so the next invocation can open it.
 */
export function localHandler<E = unknown, R = unknown>(name: LocalFunctionName): Handler<E, R> {
  return async (event, context) => {
    const settings = loadSettingsFromProcess();
    const state = await openLocalState(settings);
    try {
      const handler = localHandlerOf(name, settings, state.ports) as unknown as Handler<E, R>;
      let result: R;
      try {
        result = await handler(event, context);
      } catch (error) {
        report(name, state, state.settle(event, undefined));
        throw error;
      }
      report(name, state, state.settle(event, result));
      return result;
    } finally {
      await state.close();
    }
  };
}

function isBatchResponse(value: unknown): value is SQSBatchResponse {
  return typeof value === 'object' && value !== null && Array.isArray((value as SQSBatchResponse).batchItemFailures);
}

/** One line on stderr: where the state is, what the invocation did to the queue files, what waits in them. */
function report(name: string, state: LocalState, settled: SettleSummary | undefined): void {
  const parts = [`${name}: local state ${state.dir}`];
  if (settled) {
    parts.push(`${settled.queue} queue: ${settled.acknowledged} handled, ${settled.redelivered} to redeliver, ${settled.deadLettered} dead-lettered`);
  }
  const waiting = (['stats', 'scale', 'drain', 'decommission'] as const)
    .map((queue) => ({ queue, count: state.ports.queue.pending(queue).length }))
    .filter(({ count }) => count > 0)
    .map(({ queue, count }) => `${queue}: ${count} (${state.ports.queue.fileOf(queue)})`);
  parts.push(waiting.length > 0 ? `waiting: ${waiting.join(', ')}` : 'no messages waiting');
  process.stderr.write(`${parts.join('; ')}\n`);
}
