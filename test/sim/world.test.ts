import { describe, expect, it } from 'vitest';
import { LocalSqs } from '../../lib/adapters/local/local-sqs.js';
import { SimulatedPlatform } from '../../lib/adapters/local/simulated-platform.js';
import { VirtualClock } from '../../lib/adapters/local/virtual-clock.js';
import { seededRandom } from '../../lib/sim/random.js';
import { LOCAL_QUEUES } from '../../lib/sim/runtime.js';
import { SimWorld } from '../../lib/sim/world.js';

function world() {
  const clock = new VirtualClock('2026-01-05T00:00:00.000Z');
  const platform = new SimulatedPlatform(clock, { moveDurationMs: 30_000, moveFailureRate: 0, random: seededRandom(1) });
  const hosts = ['n1', 'n2'].map((hostName) => ({ hostName, pool: 'd/p', state: 'running' as const }));
  const sim = new SimWorld(clock, platform, { liveHostStates: () => hosts }, new LocalSqs(clock, LOCAL_QUEUES), {
    district: 'd',
    profile: 'p',
    gearsPerNode: 100,
    heartbeatSeconds: 240,
    random: seededRandom(2),
  });
  sim.joinBootedHosts();
  return { platform, sim };
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
