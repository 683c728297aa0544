import { describe, expect, it } from 'vitest';
import { cheapestReactive, describeRule, fewestWaiting, floorForResults, floorLine, reactiveFloor, replayReactive, waitingShare } from '../../lib/sim/floor.js';
import { parseTrace, type Trace } from '../../lib/sim/trace.js';
import { policyResult, reactiveRun } from '../support/builders.js';

/** One row per `stepSeconds`, demand in gears as given. */
function trace(values: number[], stepSeconds = 300): Trace {
  const rows = ['t,gears', ...values.map((v, i) => `${i * stepSeconds},${v}`)];
  return parseTrace(rows.join('\n'), 'tiny.csv', { stepSeconds, peakGears: values.reduce((m, v) => Math.max(m, v), 0) });
}

const mechanics = { gearsPerNode: 100, bootDelaySeconds: 120 };
const bare = { headroomGears: 0, holdSeconds: 0 };

describe('replayReactive: a scaler that learns of demand as it arrives', () => {
  it('a step of N gears onto no spare slot waits exactly N x the boot delay', () => {
    expect(replayReactive(trace([0, 500, 500, 500]), mechanics, bare).waitingGearMinutes).toBe(500 * 2);
    expect(replayReactive(trace([0, 500, 500, 500]), { ...mechanics, bootDelaySeconds: 240 }, bare).waitingGearMinutes).toBe(500 * 4);
    // Whole nodes: from 150 gears (2 nodes, 50 slots spare) to 450, 250 gears wait one boot.
    expect(replayReactive(trace([150, 450, 450]), mechanics, bare).waitingGearMinutes).toBe(250 * 2);
  });

  it('headroom that covers the rise leaves nothing waiting, and costs its nodes', () => {
    const run = replayReactive(trace([150, 450, 450]), mechanics, { headroomGears: 300, holdSeconds: 0 });
    expect(run.waitingGearMinutes).toBe(0);
    // ceil((150 + 300) / 100) = 5 nodes, then ceil((450 + 300) / 100) = 8, for 5 minutes each (the second rise waits for nothing).
    expect(run.nodeHours).toBeCloseTo((5 * 5 + 8 * 10) / 60, 9);
  });

  it('counts node-hours of ready and booting nodes, and releases the moment demand falls', () => {
    // 250 gears for an hour: 3 nodes; then none wanted: released at once.
    const run = replayReactive(trace([250, 250, 250, 250, 250, 250, 250, 250, 250, 250, 250, 250, 0]), mechanics, bare);
    expect(run.nodeHours).toBeCloseTo(3, 9);
    expect(run.demandGearMinutes).toBe(250 * 60);
    // 0 -> 500: five nodes booting for 2 minutes count too.
    expect(replayReactive(trace([0, 500]), mechanics, bare).nodeHours).toBeCloseTo((5 * 5) / 60, 9);
  });

  it('a rise that ends before its nodes boot waits only while it lasts', () => {
    // One-minute rows, a 3-minute boot: 500 gears for one minute.
    expect(replayReactive(trace([0, 500, 0, 0, 0], 60), { ...mechanics, bootDelaySeconds: 180 }, bare).waitingGearMinutes).toBe(500);
  });

  it('holding the recent level spares the next rise from waiting, and costs the nodes held', () => {
    // Two bursts 5 minutes apart: released between them, the second waits again.
    const bursts = trace([100, 600, 100, 600, 100]);
    const released = replayReactive(bursts, mechanics, bare);
    const held = replayReactive(bursts, mechanics, { headroomGears: 0, holdSeconds: 600 });
    expect(released.waitingGearMinutes).toBe(2 * 500 * 2);
    expect(held.waitingGearMinutes).toBe(500 * 2);
    expect(held.nodeHours).toBeGreaterThan(released.nodeHours);
  });
});

describe('the cheapest rule for a waiting budget, and the fewest waiting for a node-hours budget', () => {
  const burst = trace([100, 100, 600, 600, 100, 100, 100, 100]);

  it('finds the least headroom that keeps waiting within the budget', () => {
    // Nothing may wait: 600 slots before the rise, ceil((100 + 401) / 100) = 6 nodes; 400 of headroom holds 5.
    const none = cheapestReactive(burst, mechanics, 0);
    expect(none.waitingGearMinutes).toBe(0);
    expect(none.headroomGears).toBe(401);
    // 400 gear-minutes may wait, 200 gears for one boot: 400 slots before the rise, 201 of headroom.
    const some = cheapestReactive(burst, mechanics, 400);
    expect(some.waitingGearMinutes).toBe(400);
    expect(some.headroomGears).toBe(201);
    // A budget the bare scaler meets needs no headroom.
    expect(cheapestReactive(burst, mechanics, 1000)).toMatchObject({ headroomGears: 0, holdSeconds: 0, waitingGearMinutes: 1000 });
  });

  it('spends a node-hours budget on the headroom that leaves fewest gears waiting', () => {
    const cheapest = replayReactive(burst, mechanics, bare);
    expect(fewestWaiting(burst, mechanics, cheapest.nodeHours)).toMatchObject({ waitingGearMinutes: 1000 });
    // Enough node-hours for 5 spare nodes the whole time: nothing waits.
    const roomy = fewestWaiting(burst, mechanics, cheapest.nodeHours + (5 * 40) / 60);
    expect(roomy.waitingGearMinutes).toBe(0);
    expect(roomy.nodeHours).toBeLessThanOrEqual(cheapest.nodeHours + (5 * 40) / 60);
    // Of the rules that leave nothing waiting, the cheapest: the least headroom that does it, not the most the budget buys.
    expect(fewestWaiting(burst, mechanics, cheapest.nodeHours + 100)).toMatchObject({ headroomGears: 401, holdSeconds: 0, waitingGearMinutes: 0 });
    // Less than even the bare scaler needs: the cheapest rule, over budget.
    expect(fewestWaiting(burst, mechanics, 0)).toMatchObject({ headroomGears: 0, waitingGearMinutes: 1000 });
  });
});

describe('reactiveFloor', () => {
  // A day at 400 gears with a burst to 2,000 every 4 hours for 20 minutes.
  const day = Array.from({ length: 288 }, (_, i) => (i % 48 >= 10 && i % 48 < 14 ? 2000 : 400));
  const bursts = trace(day);

  it('bursts a scaler cannot see coming wait at least one boot each, and avoiding it costs the peak held all day', () => {
    const tight = replayReactive(bursts, mechanics, bare);
    // 6 bursts of 1,600 gears, each waiting one 2-minute boot.
    expect(tight.waitingGearMinutes).toBe(6 * 1600 * 2);
    const floor = reactiveFloor(bursts, mechanics, { clairvoyantNodeHours: tight.nodeHours, clusterAutoscalerWaiting: 6 * 1600 * 2 });
    expect(floor.nodeHoursLine).toBeCloseTo(1.05 * tight.nodeHours, 9);
    expect(waitingShare(floor.floor)).toBeGreaterThan(0.001);
    expect(floor.floor.nodeHours).toBeLessThanOrEqual(floor.nodeHoursLine);
    expect(waitingShare(floor.forUnplacedGoal)).toBeLessThanOrEqual(0.001);
    expect(floor.forUnplacedGoal.nodeHours).toBeGreaterThan(1.5 * tight.nodeHours);
    // Cluster-autoscaler waited as the bare scaler, over 0.1 %: the goal line allows only 0.1 %, so the same rule as for it.
    expect(floor.forClusterAutoscaler).toEqual(floor.forUnplacedGoal);
    // Had it waited less than 0.1 %, the rule waits no more than it.
    const stricter = reactiveFloor(bursts, mechanics, { clairvoyantNodeHours: tight.nodeHours, clusterAutoscalerWaiting: 100 });
    expect(stricter.forClusterAutoscaler!.waitingGearMinutes).toBeLessThanOrEqual(100);
    expect(stricter.forClusterAutoscaler!.nodeHours).toBeGreaterThanOrEqual(floor.forUnplacedGoal.nodeHours);
    // Leaving no gear waiting takes headroom for the whole burst (or its level held between bursts).
    expect(floor.waitingNothing.waitingGearMinutes).toBe(0);
    expect(floor.waitingNothing.nodeHours).toBeGreaterThanOrEqual(floor.forUnplacedGoal.nodeHours);
    expect(floor.waitingNothing).toEqual(cheapestReactive(bursts, mechanics, 0));
  });

  it('a flat load needs no headroom to leave nothing waiting', () => {
    const flat = trace(Array.from({ length: 288 }, () => 950));
    const floor = reactiveFloor(flat, mechanics, { clairvoyantNodeHours: 240 });
    expect(floor.waitingNothing).toMatchObject({ headroomGears: 0, waitingGearMinutes: 0 });
    expect(floor.waitingNothing.nodeHours).toBeCloseTo(10 * 24, 6);
  });

  it('is computed for a run when clairvoyant-4h ran, with cluster-autoscaler when it ran', () => {
    expect(floorForResults(bursts, mechanics, [policyResult('nodescaler')])).toBeUndefined();
    const withoutCa = floorForResults(bursts, mechanics, [policyResult('clairvoyant-4h', { nodeHours: 200 })]);
    expect(withoutCa?.nodeHoursLine).toBeCloseTo(210, 9);
    expect(withoutCa?.forClusterAutoscaler).toBeUndefined();
    const withCa = floorForResults(bursts, mechanics, [policyResult('clairvoyant-4h', { nodeHours: 200 }), policyResult('cluster-autoscaler', { unplacedGearMinutes: 0 })]);
    expect(withCa?.forClusterAutoscaler?.waitingGearMinutes).toBe(0);
  });
});

describe('floorLine', () => {
  it('prints each rule with its cost, the rule that leaves no gear waiting last', () => {
    const line = floorLine(
      {
        bootDelaySeconds: 120,
        nodeHoursLine: 2534,
        floor: reactiveRun({ headroomGears: 4, holdSeconds: 600, waitingGearMinutes: 900, nodeHours: 2400 }),
        forUnplacedGoal: reactiveRun({ holdSeconds: 600, waitingGearMinutes: 1000, nodeHours: 2360 }),
        forClusterAutoscaler: reactiveRun({ headroomGears: 4, holdSeconds: 600, waitingGearMinutes: 900, nodeHours: 2367 }),
        waitingNothing: reactiveRun({ headroomGears: 21, holdSeconds: 3600, nodeHours: 2409 }),
      },
      2413,
      2402,
    );
    expect(line).toBe(
      "reactive floor (learns of demand as it arrives, boots in 2 min): at best 0.090 % unplaced (900 gear-min) within the node-hours line, holding the last 10 min's highest demand + 4 gears (0.99 x c-4h); " +
        "unplaced <= 0.1 % takes the last 10 min's highest demand + 0 gears (0.98 x c-4h); waiting <= cluster-autoscaler's and 0.1 % takes the last 10 min's highest demand + 4 gears (2,367 node-h vs its 2,402); " +
        "no gear waiting takes the last 1 h's highest demand + 21 gears (2,409 node-h)",
    );
  });
});

describe('describeRule', () => {
  it('names headroom and the hold window', () => {
    expect(describeRule({ headroomGears: 1092, holdSeconds: 0 })).toBe('1,092 gears of headroom');
    expect(describeRule({ headroomGears: 279, holdSeconds: 600 })).toBe("the last 10 min's highest demand + 279 gears");
    expect(describeRule({ headroomGears: 0, holdSeconds: 4 * 3600 })).toBe("the last 4 h's highest demand + 0 gears");
  });
});
