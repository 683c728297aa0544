/**
 * Attribute and index names the adapter relies on; `infra/state-table.yml` must
 * declare the same (tested). A module of its own so that the state store, and
 * with it every Lambda bundle, does not take in table-definition.ts's YAML parser.
 */
export const TABLE_KEYS = {
  partition: 'pk',
  sort: 'sk',
  poolIndex: 'byPool',
  poolIndexPartition: 'gsi1pk',
  poolIndexSort: 'gsi1sk',
  /** Node items by their EC2 instance: the node's own `instanceId` field is the key, so only nodes with one are in it (sparse). */
  instanceIndex: 'byInstance',
  instanceIndexPartition: 'instanceId',
  ttl: 'expiresAt',
} as const;
