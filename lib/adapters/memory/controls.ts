/**
 * The operator controls of the in-memory store (pauses, per-pool overrides, drains waiting for their replacement),
 * with the semantics of lib/adapters/dynamodb/controls.ts: the state store contract holds both to them.
 */
import { pauseKey, type Controls, type OverrideRecord, type PauseActions, type PauseRecord, type PendingDrain } from '../../domain/controls.js';
import type { PoolId } from '../../domain/model.js';
import { ConflictError } from '../../errors.js';
import { copy, FrozenMap } from './frozen.js';

export class MemoryControls {
  private readonly pauses = new FrozenMap<string, PauseRecord>();
  private readonly overrides = new FrozenMap<PoolId, OverrideRecord>();
  private readonly pendingDrains = new FrozenMap<string, PendingDrain>();

  async list(): Promise<Controls> {
    return { pauses: [...this.pauses.values()].map(copy), overrides: [...this.overrides.values()].map(copy), pendingDrains: [...this.pendingDrains.values()].map(copy) };
  }

  async putPause(pause: PauseRecord): Promise<PauseRecord> {
    const record = copy(pause);
    this.pauses.set(pauseKey(pause), record);
    return copy(record);
  }

  async deletePause(pool: PoolId, actions: PauseActions): Promise<PauseRecord | undefined> {
    const key = pauseKey({ pool, actions });
    const existing = this.pauses.get(key);
    this.pauses.delete(key);
    return existing && copy(existing);
  }

  async putOverrides(record: Omit<OverrideRecord, 'version'>, expectedVersion: number): Promise<OverrideRecord> {
    const existing = this.overrides.get(record.pool);
    if ((existing?.version ?? 0) !== expectedVersion) {
      throw new ConflictError(`overrides of pool ${record.pool} are not at version ${expectedVersion}`, existing && copy(existing));
    }
    const next: OverrideRecord = { ...copy(record), version: expectedVersion + 1 };
    this.overrides.set(record.pool, next);
    return copy(next);
  }

  async createPendingDrain(pending: PendingDrain): Promise<PendingDrain> {
    const existing = this.pendingDrains.get(pending.nodeId);
    if (existing) throw new ConflictError(`node ${pending.nodeId} already waits for a replacement`, copy(existing));
    this.pendingDrains.set(pending.nodeId, copy(pending));
    return copy(pending);
  }

  async deletePendingDrain(nodeId: string): Promise<boolean> {
    return this.pendingDrains.delete(nodeId);
  }

  async markPendingDrainSent(nodeId: string, sentAt: string): Promise<'marked' | 'already' | 'gone'> {
    const existing = this.pendingDrains.get(nodeId);
    if (!existing) return 'gone';
    if (existing.sentAt !== undefined) return 'already';
    this.pendingDrains.set(nodeId, { ...copy(existing), sentAt });
    return 'marked';
  }

  async cancelPendingDrain(nodeId: string, cancel: { at: string; by: string; reason: string }): Promise<'cancelled' | 'already' | 'gone'> {
    const existing = this.pendingDrains.get(nodeId);
    if (!existing) return 'gone';
    if (existing.cancelledAt !== undefined) return 'already';
    this.pendingDrains.set(nodeId, { ...copy(existing), cancelledAt: cancel.at, cancelledBy: cancel.by, cancelReason: cancel.reason });
    return 'cancelled';
  }
}
