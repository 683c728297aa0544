/**
 * Host records for node names. UPSERT and delete are idempotent: deleting a
 * record that is already gone is success. Errors: `TransientError`.
 */
export interface Dns {
  upsertHost(hostName: string, ip: string): Promise<void>;
  deleteHost(hostName: string, ip: string): Promise<void>;
}
