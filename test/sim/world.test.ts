import { describe, expect, it } from 'vitest';
import { LocalSqs } from '../../lib/adapters/local/local-sqs.js';
import { SimulatedPlatform } from '../../lib/adapters/local/simulated-platform.js';
import { VirtualClock } from '../../lib/adapters/local/virtual-clock.js';
import { seededRandom } from '../../lib/sim/random.js';
import { LOCAL_QUEUES } from '../../lib/sim/runtime.js';
import { SimWorld } from '../../lib/sim/world.js';

function world(districtUids?: number) {
  const clock = new VirtualClock('2026-01-05T00:00:00.000Z');
  const sqs = new LocalSqs(clock, LOCAL_QUEUES);
  const platform = new SimulatedPlatform(clock, { moveDurationMs: 30_000, moveFailureRate: 0, random: seededRandom(1) });
  const hosts = ['n1', 'n2'].map((hostName) => ({ hostName, pool: 'd/p', state: 'running' as const }));
  const sim = new SimWorld(clock, platform, { liveHostStates: () => hosts }, sqs, {
    district: 'd',
    profile: 'p',
    gearsPerNode: 100,
    heartbeatSeconds: 240,
    random: seededRandom(2),
    ...(districtUids !== undefined ? { districtUids } : {}),
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
