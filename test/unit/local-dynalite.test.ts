import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CreateTableCommand, DescribeTableCommand, DynamoDBClient, GetItemCommand, PutItemCommand } from '@aws-sdk/client-dynamodb';
import dynalite from 'dynalite';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { startLocalDynamo } from '../../lib/adapters/local/dynalite.js';
import { createTableInput } from '../../lib/adapters/dynamodb/table-definition.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});
const storeDir = () => {
  const dir = mkdtempSync(join(tmpdir(), 'nodescaler-dynalite-'));
  dirs.push(dir);
  return join(dir, 'dynamodb');
};
const item = { pk: { S: 'NODE#n1' }, sk: { S: 'META' } };

/** A LevelDB store left by a process that stopped between dynalite's two writes of CreateTable: the table stays CREATING. */
async function storeWithCreatingTable(path: string, tableName: string): Promise<void> {
  const server = dynalite({ path, createTableMs: 3_600_000 });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const client = new DynamoDBClient({
    endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    region: 'local',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
  await client.send(new CreateTableCommand(createTableInput(tableName)));
  expect((await client.send(new DescribeTableCommand({ TableName: tableName }))).Table?.TableStatus).toBe('CREATING');
  client.destroy();
  await new Promise<void>((resolve) => server.close(() => resolve()));
}

describe('startLocalDynamo', () => {
  it('returns with the table ACTIVE: the first write after start is accepted, in memory and on LevelDB', async () => {
    for (const path of [undefined, storeDir()]) {
      const local = await startLocalDynamo(path ? { path } : {});
      try {
        const table = await local.client.send(new DescribeTableCommand({ TableName: local.tableName }));
        expect(table.Table?.TableStatus).toBe('ACTIVE');
        await expect(local.client.send(new PutItemCommand({ TableName: local.tableName, Item: item }))).resolves.toBeDefined();
      } finally {
        await local.close();
      }
    }
  });

  it('recreates a table a stopped creator left CREATING in the LevelDB store, instead of failing every request with "not found"', async () => {
    const path = storeDir();
    await storeWithCreatingTable(path, 'nodescaler-local-state');
    const local = await startLocalDynamo({ path });
    try {
      const table = await local.client.send(new DescribeTableCommand({ TableName: local.tableName }));
      expect(table.Table?.TableStatus).toBe('ACTIVE');
      await local.client.send(new PutItemCommand({ TableName: local.tableName, Item: item }));
    } finally {
      await local.close();
    }
    // The table survives a reopen with the item written.
    const again = await startLocalDynamo({ path });
    try {
      const read = await again.client.send(new GetItemCommand({ TableName: again.tableName, Key: item }));
      expect(read.Item).toEqual(item);
    } finally {
      await again.close();
    }
  });
});
