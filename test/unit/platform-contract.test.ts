import { SimulatedPlatform } from '../../lib/adapters/local/simulated-platform.js';
import { brokerOnEmulator } from '../support/broker-platform.js';
import { platformContract } from '../support/platform-contract.js';


function virtualClock() {
  let now = Date.parse('2026-11-24T01:00:00Z');
  return { now: () => new Date(now), advance: (ms: number) => (now += ms) };
}

platformContract('simulated platform', {
  create() {
    const clock = virtualClock();
    const platform = new SimulatedPlatform(clock, { moveDurationMs: 30_000, moveFailureRate: 0 });
    return {
      platform,
      node: (district, profile, nodeId, maxGears, joined) => platform.registerNode(district, profile, nodeId, maxGears, { joined }),
      gear: (nodeId, gear) => platform.putGear(nodeId, gear),
      failNextMove: (uuid) => platform.scriptMoveFailures(uuid, 1),
      deleteGear: (uuid) => void platform.removeGear(uuid),
      where: (uuid) => platform.gearLocations().get(uuid)?.[0],
      membership: (nodeId) => platform.membership(nodeId),
      advance: (ms) => clock.advance(ms),
    };
  },
});

platformContract('broker adapter over the broker emulator', {
  create() {
    const clock = virtualClock();
    const { broker, platform } = brokerOnEmulator(clock);
    const districts = new Set<string>();
    return {
      platform,
      node(district, profile, nodeId, maxGears, joined) {
        if (!districts.has(district)) broker.createDistrict(district, profile);
        districts.add(district);
        broker.addNodeHost(nodeId, profile, maxGears);
        if (joined) broker.joinDistrict(district, nodeId);
      },
      gear: (nodeId, gear) => broker.placeGear(nodeId, gear),
      failNextMove: (uuid) => broker.failNextMove(uuid, 'rsync'),
      deleteGear: (uuid) => void broker.removeGear(uuid),
      where: (uuid) => broker.whereIs(uuid),
      membership: (nodeId) => broker.membership(nodeId),
      advance: (ms) => void clock.advance(ms),
    };
  },
});
