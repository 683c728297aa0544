import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';
import { CreateTableCommand, DescribeTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import dynalite from 'dynalite';
import { createTableInput } from '../dynamodb/table-definition.js';

const require = createRequire(import.meta.url);

interface DynaliteActionTypes {
  types: Record<string, unknown>;
}
interface DynaliteStore {
  db: { open(): Promise<void> };
  tableDb: { del(key: string, callback: (error?: Error) => void): void };
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
  /** Creates another table (from `tableFile`, default infra/state-table.yml) and returns once it is ACTIVE. */
  createTable(tableName: string, tableFile?: URL | string): Promise<void>;
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
  const store = lastStore!;
  // Node's server drops a keep-alive socket idle for 5 s; a client reusing it at that instant gets ECONNRESET
  // (the SDK here makes one attempt). A busy machine pauses that long between requests, so idle sockets stay
  // open until close() (which ends idle connections) or the client is destroyed.
  (server as unknown as { keepAliveTimeout: number }).keepAliveTimeout = 0;
  if (options.path) {
    try {
      await openStore(store, options.path);
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
    await createActiveTable(client, store, tableName, options.tableFile);
  } catch (error) {
    client.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    throw error;
  }
  return {
    endpoint,
    client,
    tableName,
    createTable: (name, tableFile) => createActiveTable(client, store, name, tableFile),
    close: async () => {
      client.destroy();
      await new Promise<void>((resolve, reject) => server.close((error) => (error ? reject(error) : resolve())));
    },
  };
}

const ACTIVE_CHECKS = 500;
const ACTIVE_PAUSE_MS = 10;

/**
 * dynalite answers CreateTable with a CREATING table and marks it ACTIVE a
 * timer tick later, in a second LevelDB write; until then every request on
 * the table fails with ResourceNotFoundException. On a busy machine the first
 * request can beat that write, so the table is waited for. A LevelDB store
 * whose creator stopped before that write keeps a CREATING table forever: it
 * never held an item (writes were refused), and dynalite refuses to delete a
 * CREATING table, so its entry is dropped from the store and it is created afresh.
 */
async function createActiveTable(client: DynamoDBClient, store: DynaliteStore, tableName: string, tableFile: URL | string | undefined): Promise<void> {
  const create = () => client.send(new CreateTableCommand(createTableInput(tableName, tableFile)));
  let createdHere = true;
  try {
    await create();
  } catch (error) {
    if ((error as Error).name !== 'ResourceInUseException') throw error;
    createdHere = false;
  }
  for (let check = 1; check <= ACTIVE_CHECKS; check++) {
    const status = await tableStatus(client, tableName);
    if (status === 'ACTIVE') return;
    if (status === 'CREATING' && !createdHere) {
      await new Promise<void>((resolve, reject) => store.tableDb.del(tableName, (error) => (error ? reject(error) : resolve())));
      await create();
      createdHere = true;
    }
    await new Promise((resolve) => setTimeout(resolve, ACTIVE_PAUSE_MS));
  }
  throw new Error(`dynalite table ${tableName} not ACTIVE after ${ACTIVE_CHECKS} checks`);
}

async function tableStatus(client: DynamoDBClient, tableName: string): Promise<string | undefined> {
  try {
    return (await client.send(new DescribeTableCommand({ TableName: tableName }))).Table?.TableStatus;
  } catch (error) {
    if ((error as Error).name === 'ResourceNotFoundException') return undefined;
    throw error;
  }
}
