import { describe, expect, it } from 'vitest';
import { renderControls, type ControlsView } from '../../lib/cli/controls-view.js';
import { Style } from '../../lib/cli/render.js';

const pending = { nodeId: 'd1-small-1.example.com', pool: 'd1/small', replacementDecisionId: 'up:d1_small:1', reason: 'kernel update', by: 'local user alice', at: '2026-11-21T10:00:00.000Z' };
const view = (fields: Partial<ControlsView>): ControlsView => ({ mode: 'active', paused: [], overrides: {}, schedule: null, pendingDrains: [], ...fields });

describe('renderControls', () => {
  it('says whether a pending drain still waits for its replacement or was sent (by the evaluator or the operator) and waits for the gear mover', () => {
    const style = new Style(false);
    expect(renderControls(view({ pendingDrains: [pending] }), { style }).join(' ')).toBe(
      '  waiting: drain of d1-small-1.example.com after replacement up:d1_small:1 joins (by local user alice at 2026-11-21T10:00:00.000Z: kernel update)',
    );
    const sent = renderControls(view({ pendingDrains: [{ ...pending, sentAt: '2026-11-21T10:04:00.000Z' }] }), { style }).join(' ');
    expect(sent).toBe(
      '  waiting: drain of d1-small-1.example.com sent at 2026-11-21T10:04:00.000Z (replacement up:d1_small:1 joined), for the gear mover to begin; counted as draining meanwhile (by local user alice at 2026-11-21T10:00:00.000Z: kernel update)',
    );
    const plain = { nodeId: 'd1-small-2.example.com', pool: 'd1/small', decisionId: 'manual:20261121T100400Z:0a1b2c3d', reason: 'kernel update', by: 'local user alice', at: '2026-11-21T10:04:00.000Z', sentAt: '2026-11-21T10:04:00.000Z' };
    expect(renderControls(view({ pendingDrains: [plain] }), { style }).join(' ')).toBe(
      '  waiting: drain of d1-small-2.example.com sent at 2026-11-21T10:04:00.000Z, for the gear mover to begin; counted as draining meanwhile (by local user alice at 2026-11-21T10:04:00.000Z: kernel update)',
    );
    const cancelled = { ...plain, cancelledAt: '2026-11-21T10:04:30.000Z', cancelledBy: 'local user bob', cancelReason: 'wrong node' };
    expect(renderControls(view({ pendingDrains: [cancelled, { ...pending, cancelledAt: '2026-11-21T10:04:30.000Z', cancelledBy: 'local user bob' }] }), { style }).join(' ')).toBe(
      '  waiting: drain of d1-small-2.example.com cancelled by local user bob at 2026-11-21T10:04:30.000Z before it began; the gear mover refuses its message (by local user alice at 2026-11-21T10:04:00.000Z: kernel update) ' +
        '  waiting: drain of d1-small-1.example.com cancelled by local user bob at 2026-11-21T10:04:30.000Z before it began; it will not start (by local user alice at 2026-11-21T10:00:00.000Z: kernel update)',
    );
  });
});
