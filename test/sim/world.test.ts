import { describe, expect, it } from 'vitest';
import { LocalSqs } from '../../lib/adapters/local/local-sqs.js';
import { SimulatedPlatform } from '../../lib/adapters/local/simulated-platform.js';
import { VirtualClock } from '../../lib/adapters/local/virtual-clock.js';
import { seededRandom } from '../../lib/sim/random.js';
import { LOCAL_QUEUES } from '../../lib/sim/runtime.js';
import { parseMessage } from '../../lib/messages/index.js';
import { SimWorld } from '../../lib/sim/world.js';

function world(districtUids?: number, idleTakesNoSlot = false) {
  const clock = new VirtualClock('2026-01-05T00:00:00.000Z');
  const sqs = new LocalSqs(clock, LOCAL_QUEUES);
  const platform = new SimulatedPlatform(clock, { moveDurationMs: 30_000, moveFailureRate: 0, random: seededRandom(1), idleTakesNoSlot });
  const hosts = ['n1', 'n2'].map((hostName) => ({ hostName, pool: 'd/p', state: 'running' as const }));
  const sim = new SimWorld(clock, platform, { liveHostStates: () => hosts }, sqs, {
    district: 'd',
    profile: 'p',
    gearsPerNode: 100,
    heartbeatSeconds: 240,
    random: seededRandom(2),
    ...(districtUids !== undefined ? { districtUids } : {}),
    ...(idleTakesNoSlot ? { idleTakesNoSlot } : {}),
  });
  sim.joinBootedHosts();
  return { platform, sim, sqs, clock };
}

describe('a world sample', () => {
  it("counts the free slots of the nodes the platform closed, apart from the open nodes' capacity", async () => {
    const { platform, sim } = world();
    sim.applyDemand(120);
    expect(sim.sample(120)).toMatchObject({ capacity: 200, placed: 120, unplaced: 0, closedFree: 0 });
    const onN2 = [...platform.gearUuids('n2')].length;
    await platform.deactivateNode('d', 'n2');
    // n2's slots leave the capacity; its free ones are counted apart, whatever gears it still holds.
    expect(sim.sample(120)).toMatchObject({ capacity: 100, closedFree: 100 - onN2 });
    // Demand beyond the open node waits, beside n2's free slots.
    sim.applyDemand(250);
    const sample = sim.sample(250);
    expect(sample.unplaced).toBe(250 - 100 - onN2);
    expect(sample.closedFree).toBe(100 - onN2);
  });
});

describe("a district's UIDs", () => {
  it('places no gear beyond them, though nodes have room; the reporter refuses the rest and reads the UIDs every 5 minutes', () => {
    const { sim, sqs, clock } = world(150);
    sim.applyDemand(180);
    expect(sim.sample(180)).toMatchObject({ capacity: 200, placed: 150, unplaced: 30 });
    const bodies: unknown[] = [];
    for (let minute = 0; minute < 10; minute++) {
      sim.reportRefused();
      const batch = sqs.receive('stats');
      for (const message of batch) bodies.push(JSON.parse(message.body));
      sqs.complete('stats', batch.map((m) => m.messageId));
      clock.advance(60_000);
    }
    const reads = bodies.filter((b) => (b as { type: string }).type === 'district-capacity');
    expect(reads).toEqual([
      { type: 'district-capacity', v: 1, district: 'd', profile: 'p', maxCapacity: 150, availableCapacity: 0, readAt: '2026-01-05T00:00:00.000Z' },
      { type: 'district-capacity', v: 1, district: 'd', profile: 'p', maxCapacity: 150, availableCapacity: 0, readAt: '2026-01-05T00:05:00.000Z' },
    ]);
    expect(sim.districtReadsSent).toBe(2);
    expect(bodies.some((b) => (b as { type: string; refused?: number }).type === 'gears-refused' && (b as { refused: number }).refused === 30)).toBe(true);
    // Gears leave: their UIDs free, and the waiting ones take them.
    sim.applyDemand(100);
    sim.applyDemand(180);
    expect(sim.sample(180)).toMatchObject({ placed: 150, unplaced: 30 });
  });

  it('sends no district read without a UID limit', () => {
    const { sim, sqs, clock } = world();
    for (let minute = 0; minute < 6; minute++) {
      sim.applyDemand(250);
      sim.reportRefused();
      clock.advance(60_000);
    }
    expect(sim.districtReadsSent).toBe(0);
    expect(sqs.receive('stats').map((m) => JSON.parse(m.body).type)).not.toContain('district-capacity');
  });
});

describe('slots counted as origin-server counts them (idleTakesNoSlot)', () => {
  /** The node-stats each agent sent this minute, parsed by the project's schema. */
  function reports(sim: SimWorld, sqs: LocalSqs) {
    sim.reportStats();
    const batch = sqs.receive('stats');
    sqs.complete('stats', batch.map((m) => m.messageId));
    return batch.map((m) => {
      const parsed = parseMessage(JSON.parse(m.body), { now: new Date('2026-01-05T00:00:00.000Z') });
      if (!parsed.ok || parsed.message.type !== 'node-stats') throw new Error(`invalid node-stats: ${m.body}`);
      return parsed.message;
    });
  }

  it("places idled applications' gears beyond the active slots, and reports as the shipped agent: active gears, the idle ones marked in the list", () => {
    const { platform, sim, sqs } = world(undefined, true);
    sim.applyDemand(260);
    // About 30 % of applications are idle by default: 260 gears fit in 200 active slots.
    const sample = sim.sample(260);
    expect(sample).toMatchObject({ placed: 260, unplaced: 0, capacity: 200 });
    const sent = reports(sim, sqs);
    expect(sent.map((r) => r.nodeId).sort()).toEqual(['n1', 'n2']);
    for (const report of sent) {
      const listed = report.gears!;
      expect(listed).toHaveLength([...platform.gearUuids(report.nodeId)].length);
      expect(listed.filter((gear) => !gear.idle)).toHaveLength(report.activeGears);
      expect(report.activeGears).toBeLessThanOrEqual(100);
      expect(report.idleGears).toBeUndefined();
      expect(report.disruptiveGears).toBe(listed.filter((gear) => gear.disruptive).length);
      expect(listed.some((gear) => gear.idle && gear.disruptive)).toBe(false);
    }
    expect(sent.reduce((sum, r) => sum + r.gears!.length - r.activeGears, 0)).toBeGreaterThan(60);
  });

  it('reports every gear as active without it, the idle ones counted among them', () => {
    const { sim, sqs } = world();
    sim.applyDemand(180);
    const sent = reports(sim, sqs);
    expect(sent.reduce((sum, r) => sum + r.activeGears, 0)).toBe(180);
    expect(sent.every((r) => r.gears === undefined && (r.idleGears ?? 0) > 0)).toBe(true);
  });
});
