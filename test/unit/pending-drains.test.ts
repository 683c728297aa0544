import { describe, expect, it } from 'vitest';
import type { PendingDrain } from '../../lib/domain/controls.js';
import { cancelledBeforeBegun, pendingDrainDecisionId, RENEWAL_BY } from '../../lib/domain/pending-drains.js';

const AT = '2026-11-21T10:00:00.000Z';
const replace: PendingDrain = { nodeId: 'd1-small-1.example.com', pool: 'd1/small', replacementDecisionId: 'up:d1_small:1', reason: 'kernel update', by: 'local user alice', at: AT };
const plain: PendingDrain = { nodeId: 'd1-small-2.example.com', pool: 'd1/small', decisionId: 'manual:20261121T100000Z:0a1b2c3d', reason: 'kernel update', by: 'local user alice', at: AT, sentAt: AT };

describe('pendingDrainDecisionId', () => {
  it("names the drain each kind starts: the operator's own decision, after its replacement, or a renewal's per node", () => {
    expect(pendingDrainDecisionId(plain)).toBe('manual:20261121T100000Z:0a1b2c3d');
    expect(pendingDrainDecisionId(replace)).toBe('manual:after:up:d1_small:1');
    const renewal = pendingDrainDecisionId({ ...replace, by: RENEWAL_BY });
    expect(renewal).toMatch(/^manual:renew:up:d1_small:1:[0-9a-f]{8}$/);
    // One scale-up replaces several nodes: each node's drain has an id of its own.
    expect(pendingDrainDecisionId({ ...replace, by: RENEWAL_BY, nodeId: 'd1-small-3.example.com' })).not.toBe(renewal);
  });
});

describe('cancelledBeforeBegun', () => {
  const cancelled = { ...plain, cancelledAt: '2026-11-21T10:00:30.000Z', cancelledBy: 'local user bob', cancelReason: 'wrong node' };

  it('refuses the drain of a cancelled pending drain, naming who cancelled it, when and why', () => {
    expect(cancelledBeforeBegun([replace, cancelled], plain.nodeId, plain.decisionId!)).toBe('cancelled by local user bob at 2026-11-21T10:00:30.000Z before it began: wrong node');
  });

  it('refuses nothing else: a pending drain not cancelled, another decision for the node, another node', () => {
    expect(cancelledBeforeBegun([plain], plain.nodeId, plain.decisionId!)).toBeUndefined();
    expect(cancelledBeforeBegun([cancelled], plain.nodeId, 'manual:20261121T100500Z:0b1b2c3d')).toBeUndefined();
    expect(cancelledBeforeBegun([cancelled], replace.nodeId, plain.decisionId!)).toBeUndefined();
    expect(cancelledBeforeBegun([], plain.nodeId, plain.decisionId!)).toBeUndefined();
  });
});
