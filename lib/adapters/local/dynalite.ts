import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';
import { CreateTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import dynalite from 'dynalite';
import { createTableInput } from '../dynamodb/table-definition.js';

const require = createRequire(import.meta.url);

interface DynaliteActionTypes {
  types: Record<string, unknown>;
}
interface DynaliteStore {
  db: { open(): Promise<void> };
}
interface DynaliteDb {
  create(options: unknown): DynaliteStore;
  checkConditional(data: Record<string, unknown>, existing: unknown): (Error & { body?: Record<string, unknown> }) | null | undefined;
}

let patched = false;
/** The store of the dynalite server created last (synchronously, by `dynalite()`). */
let lastStore: DynaliteStore | undefined;

/**
 * dynalite 4 predates `ReturnValuesOnConditionCheckFailure`: it strips the
 * parameter and never returns the old item. DynamoDB does, and our adapter
 * relies on it, so we teach dynalite the same answer instead of giving the
 * adapter a code path that only tests would take.
 */
function teachReturnValuesOnConditionCheckFailure(): void {
  if (patched) return;
  patched = true;
  for (const action of ['putItem', 'updateItem', 'deleteItem']) {
    const validation = require(`dynalite/validations/${action}`) as DynaliteActionTypes;
    validation.types.ReturnValuesOnConditionCheckFailure = { type: 'String', enum: ['ALL_OLD', 'NONE'] };
  }
  const db = require('dynalite/db') as DynaliteDb;
  const create = db.create.bind(db);
  db.create = (options) => (lastStore = create(options));
  const checkConditional = db.checkConditional.bind(db);
  db.checkConditional = (data, existing) => {
    const error = checkConditional(data, existing);
    if (error?.body && existing && data.ReturnValuesOnConditionCheckFailure === 'ALL_OLD') error.body.Item = existing;
    return error;
  };
}

/** The LevelDB directory is held by another process (its LOCK): open it later. */
export class LocalStateBusyError extends Error {
  readonly retryable = true;
  constructor(path: string, cause: unknown) {
    super(`the local state ${path} is in use by another process (LevelDB lock)`, { cause });
    this.name = 'LocalStateBusyError';
  }
}

/**
 * dynalite opens its LevelDB directory in the background and, when another
 * process holds the lock, throws "Database is closed" from inside its request
 * handler: an uncaught exception no caller can catch. So the store dynalite
 * creates is captured here and opened (again) until the lock is free: the
 * other process (an invocation, a status refresh) holds it a second or two.
 */
async function openStore(store: DynaliteStore, path: string): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await store.db.open();
    } catch (error) {
      if (attempt >= BUSY_ATTEMPTS) throw new LocalStateBusyError(path, error);
      await new Promise((resolve) => setTimeout(resolve, BUSY_PAUSE_MS));
    }
  }
}

const BUSY_ATTEMPTS = 40;
const BUSY_PAUSE_MS = 250;

export interface LocalDynamo {
  endpoint: string;
  client: DynamoDBClient;
  tableName: string;
  close(): Promise<void>;
}

/**
 * Starts dynalite in this process on a random loopback port (memory store,
 * or `path` for a LevelDB directory) and creates the state table from
 * infra/state-table.yml (or `tableFile`: a bundle cannot find the file
 * relative to its own source) unless the store already holds it.
 */
export async function startLocalDynamo(options: { tableName?: string; path?: string; tableFile?: URL | string } = {}): Promise<LocalDynamo> {
  teachReturnValuesOnConditionCheckFailure();
  const server = dynalite({ createTableMs: 0, deleteTableMs: 0, updateTableMs: 0, ...(options.path ? { path: options.path } : {}) });
  if (options.path) {
    try {
      await openStore(lastStore!, options.path);
    } catch (error) {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      throw error;
    }
  }
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const endpoint = `http://127.0.0.1:${port}`;
  const client = new DynamoDBClient({
    endpoint,
    region: 'local',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    maxAttempts: 1,
  });
  const tableName = options.tableName ?? 'nodescaler-local-state';
  try {
    await client.send(new CreateTableCommand(createTableInput(tableName, options.tableFile)));
  } catch (error) {
    if ((error as Error).name !== 'ResourceInUseException') throw error;
  }
  return {
    endpoint,
    client,
    tableName,
    close: async () => {
      client.destroy();
      await new Promise<void>((resolve, reject) => server.close((error) => (error ? reject(error) : resolve())));
    },
  };
}
