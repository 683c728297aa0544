import { DynamoDbStateStore } from '../../lib/adapters/dynamodb/state-store.js';
import { startLocalDynamo, type LocalDynamo } from '../../lib/adapters/local/dynalite.js';

/**
 * One dynalite server per test file; each `newStore()` gets its own table
 * (created from infra/state-table.yml), so tests never see each other's items.
 */
export function dynaliteHarness() {
  let local: LocalDynamo | undefined;
  let tables = 0;
  return {
    async create(): Promise<DynamoDbStateStore> {
      local ??= await startLocalDynamo();
      tables += 1;
      const tableName = `state-${tables}`;
      await local.createTable(tableName);
      return new DynamoDbStateStore(DynamoDbStateStore.documentClient(local.client), tableName);
    },
    get local(): LocalDynamo | undefined {
      return local;
    },
    async close(): Promise<void> {
      await local?.close();
      local = undefined;
    },
  };
}
