/**
 * Each gear's recent scale-down moves, for the disruption budget's
 * maxMovesPerGear: one small item per moved gear (GEAR#<uuid> / MOVES), a
 * string set of `<at>|<key>` entries, so recording a move again (a retried
 * step) adds nothing; it expires (DynamoDB TTL) its ttl after the latest move.
 * Written once per completed move; read in batches of 100, only for the
 * gears of the node the evaluator is about to drain. Not in the pool index.
 * DynamoDbStateStore delegates to it; `send` is its error translation.
 */
import { UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { GearMoveRecord } from '../../ports/state-store.js';
import { batchGetAll, type Send } from './items.js';
import { TABLE_KEYS } from './table-keys.js';

const { partition: PK, sort: SK, ttl: TTL } = TABLE_KEYS;

const gearKey = (uuid: string) => ({ [PK]: `GEAR#${uuid}`, [SK]: 'MOVES' });

export class DynamoDbGearMoves {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
    private readonly send: Send,
  ) {}

  async record(moves: readonly GearMoveRecord[], ttlMs: number): Promise<void> {
    for (const move of moves) {
      const expiresAt = Math.floor((Date.parse(move.at) + ttlMs) / 1000);
      await this.send(() =>
        this.client.send(
          new UpdateCommand({
            TableName: this.tableName,
            Key: gearKey(move.uuid),
            UpdateExpression: 'ADD #moves :entry SET #uuid = :uuid, #ttl = :ttl',
            ExpressionAttributeNames: { '#moves': 'moves', '#uuid': 'uuid', '#ttl': TTL },
            ExpressionAttributeValues: { ':entry': new Set([`${move.at}|${move.key}`]), ':uuid': move.uuid, ':ttl': expiresAt },
          }),
        ),
      );
    }
  }

  async read(uuids: readonly string[]): Promise<Map<string, string[]>> {
    const found = new Map<string, string[]>();
    const keys = [...new Set(uuids)].map(gearKey);
    const read = { ProjectionExpression: '#uuid, #moves', ExpressionAttributeNames: { '#uuid': 'uuid', '#moves': 'moves' } };
    for (const item of await batchGetAll(this.client, this.tableName, this.send, keys, 'gear move history', read)) {
      const uuid = item.uuid as string;
      const entries = item.moves instanceof Set ? [...(item.moves as Set<string>)] : [];
      found.set(uuid, entries.map((entry) => entry.slice(0, entry.indexOf('|') < 0 ? entry.length : entry.indexOf('|'))).sort());
    }
    return found;
  }
}
