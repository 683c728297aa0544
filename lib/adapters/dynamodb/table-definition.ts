import { readFileSync } from 'node:fs';
import type { CreateTableCommandInput } from '@aws-sdk/client-dynamodb';
import { parse } from 'yaml';

export { TABLE_KEYS } from './table-keys.js';

export const STATE_TABLE_FILE = new URL('../../../infra/state-table.yml', import.meta.url);

interface CfnTable {
  Properties: Pick<CreateTableCommandInput, 'AttributeDefinitions' | 'KeySchema' | 'GlobalSecondaryIndexes' | 'BillingMode'> & {
    TimeToLiveSpecification?: { AttributeName: string; Enabled: boolean };
    PointInTimeRecoverySpecification?: { PointInTimeRecoveryEnabled: boolean };
  };
}

/** The deployed table's CloudFormation properties, read from the one definition file. */
export function readStateTableResource(file: URL | string = STATE_TABLE_FILE): CfnTable['Properties'] {
  const document = parse(readFileSync(file, 'utf8')) as { Resources?: { StateTable?: CfnTable } };
  const table = document.Resources?.StateTable;
  if (!table) throw new Error(`${String(file)} has no Resources.StateTable`);
  return table.Properties;
}

/** `CreateTable` input for a local table (dynalite) identical in keys and indexes to the deployed one. */
export function createTableInput(tableName: string, file?: URL | string): CreateTableCommandInput {
  const { AttributeDefinitions, KeySchema, GlobalSecondaryIndexes, BillingMode } = readStateTableResource(file);
  return { TableName: tableName, AttributeDefinitions, KeySchema, GlobalSecondaryIndexes, BillingMode };
}
