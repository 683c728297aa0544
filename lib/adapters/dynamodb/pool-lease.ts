/**
 * The write that takes a pool's action lease: it creates the pool item when
 * it is missing (in the pools' index partition) and grants the lease unless
 * someone else holds one that has not expired. DynamoDbStateStore runs it as
 * one conditional update.
 */
import type { UpdateCommandInput } from '@aws-sdk/lib-dynamodb';
import { splitPoolId, type PoolId, type PoolLease } from '../../domain/model.js';
import { TABLE_KEYS } from './table-keys.js';

const { partition: PK, poolIndexPartition: GPK, poolIndexSort: GSK } = TABLE_KEYS;

export function leaseExpression(pool: PoolId, granted: PoolLease, now: Date): Omit<UpdateCommandInput, 'TableName' | 'Key'> {
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
