/**
 * A pool's action lease, on the pool item (POOL#<pool> / POOL): taking it
 * (one conditional update that creates the pool item when it is missing, in
 * the pools' index partition, and grants the lease unless someone else holds
 * one that has not expired), marking its message sent, and releasing it.
 * DynamoDbStateStore delegates to this module; `send` is its error translation.
 */
import type { DynamoDBDocumentClient, UpdateCommandInput } from '@aws-sdk/lib-dynamodb';
import { splitPoolId, type PoolId, type PoolLease, type PoolRecord } from '../../domain/model.js';
import { ConflictError } from '../../errors.js';
import type { LeaseRequest } from '../../ports/state-store.js';
import { grantLease } from '../state-rules.js';
import { conditionalUpdate, type Send } from './items.js';
import { TABLE_KEYS } from './table-keys.js';

const { partition: PK, sort: SK, poolIndexPartition: GPK, poolIndexSort: GSK } = TABLE_KEYS;
const poolKey = (pool: PoolId) => ({ [PK]: `POOL#${pool}`, [SK]: 'POOL' });

export class DynamoDbPoolLeases {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
    private readonly send: Send,
  ) {}

  async acquire(pool: PoolId, lease: LeaseRequest, now: Date): Promise<PoolRecord> {
    return this.update(pool, leaseExpression(pool, grantLease(lease, now), now), `pool ${pool} lease is held by another action`);
  }

  async markSent(pool: PoolId, holder: string, now: Date): Promise<PoolRecord> {
    return this.update(
      pool,
      {
        UpdateExpression: 'SET #lease.#sentAt = :now, #version = #version + :one',
        ConditionExpression: '#lease.#holder = :holder',
        ExpressionAttributeNames: { '#lease': 'lease', '#holder': 'holder', '#sentAt': 'sentAt', '#version': 'version' },
        ExpressionAttributeValues: { ':holder': holder, ':now': now.toISOString(), ':one': 1 },
      },
      `pool ${pool} lease is not held by ${holder}`,
    );
  }

  async release(pool: PoolId, holder: string): Promise<PoolRecord> {
    try {
      return await this.update(
        pool,
        {
          UpdateExpression: 'REMOVE #lease SET #version = #version + :one',
          ConditionExpression: '#lease.#holder = :holder',
          ExpressionAttributeNames: { '#lease': 'lease', '#holder': 'holder', '#version': 'version' },
          ExpressionAttributeValues: { ':holder': holder, ':one': 1 },
        },
        `pool ${pool} lease is not held by ${holder}`,
      );
    } catch (error) {
      // Not ours (released already, or taken over after expiry): nothing to release.
      if (error instanceof ConflictError && error.current) return error.current as PoolRecord;
      throw error;
    }
  }

  private update(pool: PoolId, input: Omit<UpdateCommandInput, 'TableName' | 'Key'>, conflict: string): Promise<PoolRecord> {
    return conditionalUpdate<PoolRecord>(this.client, this.tableName, this.send, { Key: poolKey(pool), ...input }, { kind: 'pool', id: pool, conflict });
  }
}

function leaseExpression(pool: PoolId, granted: PoolLease, now: Date): Omit<UpdateCommandInput, 'TableName' | 'Key'> {
  const { district, profile } = splitPoolId(pool);
  return {
    UpdateExpression:
      'SET #lease = :lease, #version = if_not_exists(#version, :zero) + :one, #pool = :pool, #district = :district, #profile = :profile, #gpk = :gpk, #gsk = :gsk',
    ConditionExpression: `attribute_not_exists(${PK}) OR attribute_not_exists(#lease) OR #lease.#expiresAt <= :now OR #lease.#holder = :holder`,
    ExpressionAttributeNames: {
      '#lease': 'lease',
      '#version': 'version',
      '#pool': 'pool',
      '#district': 'district',
      '#profile': 'profile',
      '#gpk': GPK,
      '#gsk': GSK,
      '#expiresAt': 'expiresAt',
      '#holder': 'holder',
    },
    ExpressionAttributeValues: {
      ':lease': granted,
      ':zero': 0,
      ':one': 1,
      ':pool': pool,
      ':district': district,
      ':profile': profile,
      ':gpk': 'POOLS',
      ':gsk': `POOL#${pool}`,
      ':now': now.toISOString(),
      ':holder': granted.holder,
    },
  };
}
