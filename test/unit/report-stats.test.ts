import { describe, expect, it } from 'vitest';
import { RecordingQueue } from '../support/recording-queue.js';
import { SimulatedPlatform } from '../../lib/adapters/local/simulated-platform.js';
import { InMemoryStateStore } from '../../lib/adapters/memory/state-store.js';
import { reportStats } from '../../lib/app/report-stats.js';
import { ValidationError } from '../../lib/errors.js';
import { parseMessage } from '../../lib/messages/index.js';
import type { Platform } from '../../lib/ports/platform.js';
import { NOW, config, node } from '../support/builders.js';

const clock = { now: () => NOW };
const cfg = config({ pools: [{ district: 'd1', profile: 'small', max: 50 }, { district: 'd2', profile: 'large', max: 10, naming: { base: 'large' } }] });

async function world() {
  const store = new InMemoryStateStore();
  const platform = new SimulatedPlatform(clock, { moveDurationMs: 0, moveFailureRate: 0 });
  platform.registerNode('d1', 'small', 'a.example.com', 100);
  platform.registerNode('d1', 'small', 'b.example.com', 50);
  platform.registerNode('d2', 'large', 'c.example.com', 20);
  for (let i = 0; i < 3; i++) platform.putGear('a.example.com', { uuid: `ga${i}`, app: 'app-ns', size: 'small' });
  platform.putGear('c.example.com', { uuid: 'gc0', app: 'big-ns', size: 'large' });
  for (const record of [
    node('a.example.com', { gears: 90, max: 100 }), // stale stats in the table: the platform's figures win
    node('b.example.com', { state: 'draining' }),
    node('ghost.example.com', { state: 'provisioning' }), // not on the platform yet
    node('gone.example.com', { state: 'terminated' }), // never reported
    node('c.example.com', { pool: 'd2/large' }),
  ]) {
    const { version: _v, stateChangedAt: _s, ...fresh } = record;
    await store.createNode(fresh, NOW);
  }
  const queue = new RecordingQueue();
  const warnings: string[] = [];
  return { store, platform, queue, warnings, ports: { store, platform, queue, clock, warn: (line: string) => warnings.push(line) } };
}

const stats = (nodeId: string, district: string, profile: string, activeGears: number, maxActiveGears: number) => ({
  type: 'node-stats',
  v: 1,
  nodeId,
  district,
  profile,
  activeGears,
  maxActiveGears,
  reportedAt: NOW.toISOString(),
});

describe('reportStats', () => {
  it('sends one node-stats per known node of every pool, with the platform figures, and skips an unknown node with one warning', async () => {
    const w = await world();
    const result = await reportStats(w.ports, cfg);
    const expected = [stats('a.example.com', 'd1', 'small', 3, 100), stats('b.example.com', 'd1', 'small', 0, 50), stats('c.example.com', 'd2', 'large', 1, 20)];
    expect(w.queue.sent('stats')).toStrictEqual(expected);
    for (const sent of w.queue.sent('stats')) {
      const parsed = parseMessage(JSON.stringify(sent));
      expect(parsed.ok && parsed.message.type).toBe('node-stats');
    }
    expect(result.sent).toStrictEqual(expected);
    expect(result.skipped).toStrictEqual([{ nodeId: 'ghost.example.com', reason: 'the platform does not know this node' }]);
    expect(w.warnings).toStrictEqual(['warning: ghost.example.com: no stats sent: the platform does not know this node']);
  });

  it('--pool reports only that pool, and an unconfigured pool is a ValidationError', async () => {
    const w = await world();
    await reportStats(w.ports, cfg, 'd2/large');
    expect(w.queue.sent('stats')).toStrictEqual([stats('c.example.com', 'd2', 'large', 1, 20)]);
    expect(w.warnings).toStrictEqual([]);
    await expect(reportStats(w.ports, cfg, 'd9/none')).rejects.toBeInstanceOf(ValidationError);
  });

  it('a node whose facts cannot be read gets no message and one warning, never a guess', async () => {
    const w = await world();
    const failing: Platform = Object.assign(Object.create(w.platform) as SimulatedPlatform, {
      readNodeFacts: async (nodeId: string) => {
        if (nodeId === 'b.example.com') throw new Error('mcollective: no response');
        return w.platform.readNodeFacts(nodeId);
      },
    });
    const result = await reportStats({ ...w.ports, platform: failing }, cfg, 'd1/small');
    expect(w.queue.sent('stats').map((m) => m.type === 'node-stats' && m.nodeId)).toStrictEqual(['a.example.com']);
    expect(result.skipped.map((s) => s.nodeId)).toStrictEqual(['b.example.com', 'ghost.example.com']);
    expect(w.warnings).toStrictEqual([
      'warning: b.example.com: no stats sent: its facts could not be read: mcollective: no response',
      'warning: ghost.example.com: no stats sent: the platform does not know this node',
    ]);
  });

  it('a platform without readNodeFacts is refused before anything is sent', async () => {
    const w = await world();
    const bare = { listGears: (nodeId: string) => w.platform.listGears(nodeId) } as unknown as Platform;
    await expect(reportStats({ ...w.ports, platform: bare }, cfg)).rejects.toBeInstanceOf(ValidationError);
    expect(w.queue.sent('stats')).toStrictEqual([]);
  });
});
