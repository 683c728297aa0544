/**
 * Counterexamples the generated scenarios found, as fast-check shrunk them,
 * kept so that the bug they showed stays fixed. Each names the fix.
 */
import { describe, expect, it } from 'vitest';
import type { SimulatedPlatform } from '../../lib/adapters/local/simulated-platform.js';
import { runScenario, type Mutants, type Scenario } from './support/scenario.js';

/**
 * The simulated platform, but the first `times` remove-nodes find a gear
 * landed on their node just before (an operator's oo-admin-move after the
 * decommissioner's last check): the gear leaves the fullest other node.
 */
function gearsLandBeforeRemove(times: number): (platform: SimulatedPlatform) => SimulatedPlatform {
  let left = times;
  return (platform) =>
    new Proxy(platform, {
      get(target, property, receiver) {
        if (property === 'removeNode') {
          return async (district: string, nodeId: string) => {
            if (left > 0 && target.hasNode(nodeId)) {
              const donor = target.nodeIds().filter((id) => id !== nodeId).sort((a, b) => target.nodeLoad(b).activeGears - target.nodeLoad(a).activeGears)[0];
              const [gear] = donor === undefined ? [] : await target.listGears(donor);
              if (gear) {
                left--;
                target.removeGear(gear.uuid);
                target.putGear(nodeId, gear);
              }
            }
            return target.removeNode(district, nodeId);
          };
        }
        const value = Reflect.get(target, property, receiver) as unknown;
        return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
      },
    });
}

const quiet = {
  faults: { errorBefore: 0, errorAfter: 0, crash: 0, skewMs: 0 },
  queue: { duplicateRate: 0, reorderWindow: 1, delayRate: 0, partialSendFailure: 0 },
  concurrency: 0,
  clockJumps: 0,
  moveFailureRate: 0,
  store: 'memory',
} as const;

const regressions: Array<{ name: string; scenario: Scenario; fewestServing?: number; mutants?: Mutants; minDrains?: number }> = [
  {
    // Found on the broker emulator (issue 18, item 1): a node whose add-node
    // failed under faults joined no district; an EC2 rebalance recommendation
    // then drained it, and the drain's close step (deactivate-node) failed
    // with "doesn't belong to district" on every pass: the drain stayed in
    // phase starting and the node draining for good (80 minutes after the
    // faults). Fix: a node in no district is already closed to new gears
    // (lib/workflows/drain/workflow.ts); the drain goes on and releases it.
    name: 'a drain of a node that never joined its district ends (broker emulator)',
    scenario: {
      seed: 10,
      demand: [{ minutes: 14, gears: 25 }, { minutes: 19, gears: 35 }, { minutes: 10, gears: 31 }, { minutes: 16, gears: 36 }, { minutes: 8, gears: 8 }, { minutes: 16, gears: 15 }],
      faults: { errorBefore: 0.0552, errorAfter: 0.0135, crash: 0.0085, skewMs: 22_700 },
      queue: { duplicateRate: 0.2052, reorderWindow: 8, delayRate: 0.1366, partialSendFailure: 0 },
      concurrency: 0.2529,
      clockJumps: 0.0258,
      moveFailureRate: 0.001,
      rebalanceRate: 0.0463,
      hostileRate: 0.001,
      capacityCap: 5,
      maxNodesTotal: 5,
      maxCores: 30,
      store: 'memory',
      platform: 'broker',
    },
  },
  {
    // The replacement for an interrupted node was clamped by pool.max and
    // maxNodesTotal only, each with the interrupted node not counted: a
    // rebalance recommendation at the core limit launched a third 4-vCPU host
    // under maxCores 8. Fix: replacementCount goes through the evaluator's
    // clampScaleUp (every limit, the interrupted node counted).
    name: 'a replacement for an interrupted node stays within maxCores',
    scenario: { ...quiet, seed: 1, demand: [{ minutes: 3, gears: 11 }], rebalanceRate: 0.04272970999591053, maxNodesTotal: 3, maxCores: 8 },
  },
  {
    // With the pool at min 1 and a scale-down draining one of its two nodes,
    // a rebalance recommendation for the other (empty) node drained and
    // released it with no replacement: the replacement only counted gears
    // without room. Fix: replacementCount also covers the pool's min, and
    // the gear mover requests it when the urgent drain starts.
    name: 'an interrupted empty node at the pool minimum is replaced',
    scenario: { ...quiet, seed: 6, demand: [{ minutes: 5, gears: 0 }], queue: { ...quiet.queue, reorderWindow: 2 }, rebalanceRate: 0.02170138852670789, maxNodesTotal: 3 },
    fewestServing: 1,
  },
  {
    // Stats of a new node were lost or late (faults on the stats path), so it
    // was still provisioning in the state table at maxNodeProvisionTime, while
    // the platform had already placed gears on it. The provisioner failed it
    // and released its host with the gears on it: the provisioner never asked
    // the platform. Fix: a timed-out node is looked up on the platform first
    // (holding gears: it joined, marked active), and a failed node's release
    // starts with remove-node, which the platform refuses while it holds gears.
    // (Not shrunk: fast-check does not shrink a replayed example.)
    name: 'a node whose stats were lost is not released with gears on it',
    scenario: {
      seed: 1779487918,
      demand: [
        { minutes: 13, gears: 27 },
        { minutes: 17, gears: 31 },
        { minutes: 3, gears: 4 },
      ],
      faults: { errorBefore: 0.0362, errorAfter: 0.0954, crash: 0.04185, skewMs: 1 },
      queue: { duplicateRate: 0.1464, reorderWindow: 3, delayRate: 0.1862, partialSendFailure: 0.0606 },
      concurrency: 0.0024,
      clockJumps: 0.04975,
      moveFailureRate: 0.1982,
      rebalanceRate: 0.02485,
      maxNodesTotal: 3,
      store: 'memory',
    },
  },
  {
    // RunInstances took effect, the provisioner saw an error and never
    // recorded the instance id; the node joined, was later drained, and its
    // release reported it instead of terminating it: the host ran on, over
    // maxNodesTotal. Fix: the sweeper adopts the unrecorded host of any node
    // not terminated. (Not shrunk.)
    name: 'the host of a node that joined unrecorded is terminated when the node is released',
    scenario: {
      seed: 11,
      demand: [
        { minutes: 9, gears: 23 },
        { minutes: 7, gears: 10 },
        { minutes: 7, gears: 33 },
        { minutes: 18, gears: 3 },
        { minutes: 11, gears: 16 },
        { minutes: 20, gears: 49 },
      ],
      faults: { errorBefore: 0.0868, errorAfter: 0.051500000000000004, crash: 0.03535, skewMs: 29994 },
      queue: { duplicateRate: 0.28319999999999995, reorderWindow: 6, delayRate: 0.0012000000000000001, partialSendFailure: 0.0014000000000000002 },
      concurrency: 0.2976,
      clockJumps: 0.049100000000000005,
      moveFailureRate: 0.19820000000000002,
      rebalanceRate: 0.00005,
      maxNodesTotal: 4,
      maxCores: 20,
      store: 'memory',
    },
  },
  {
    // A launch retried and backed off after its name was claimed; the node was
    // failed a minute after its host was requested (maxNodeProvisionTime
    // counted from the claim), then the host joined and took gears, and the
    // release stopped at remove-node for good. Fix: the provisioning time
    // counts from the host request. (Not shrunk.)
    name: 'a host launched late gets its full provisioning time',
    scenario: {
      seed: 1150971317,
      demand: [
        { minutes: 9, gears: 36 },
        { minutes: 4, gears: 21 },
        { minutes: 19, gears: 11 },
        { minutes: 20, gears: 35 },
        { minutes: 19, gears: 4 },
        { minutes: 18, gears: 52 },
      ],
      faults: { errorBefore: 0.0087, errorAfter: 0.0459, crash: 0.049800000000000004, skewMs: 8019 },
      queue: { duplicateRate: 0.2859, reorderWindow: 6, delayRate: 0.044000000000000004, partialSendFailure: 0.19720000000000001 },
      concurrency: 0.1353,
      clockJumps: 0.0291,
      moveFailureRate: 0.0356,
      rebalanceRate: 0.03425,
      capacityCap: 7,
      maxNodesTotal: 7,
      maxCores: 19,
      store: 'memory',
    },
  },
  {
    // A scale-up claimed its names, then its invocation died before the node
    // records; its message came back only after the lease ran out and the
    // evaluator had decided again: both decisions launched, 4 hosts under
    // maxCores 15 (4 vCPUs each). Fix: a resumed claim creates no more nodes
    // once another decision holds the pool's lease. (Shrunk by fast-check.)
    name: 'a scale-up resumed after another decision took the pool launches nothing more',
    scenario: {
      seed: 21,
      demand: [{ minutes: 14, gears: 16 }],
      faults: { errorBefore: 0.09820000000000001, errorAfter: 0, crash: 0.0474, skewMs: 6 },
      queue: { duplicateRate: 0.3, reorderWindow: 7, delayRate: 0.14980000000000002, partialSendFailure: 0.1986 },
      concurrency: 0.0906,
      clockJumps: 0.0002,
      moveFailureRate: 0.032600000000000004,
      rebalanceRate: 0.05,
      maxNodesTotal: 5,
      maxCores: 15,
      store: 'memory',
    },
  },
  {
    // A failed node's host joined after all and took gears before its release
    // ran remove-node, which then refused it for good: the node stayed
    // terminating with its gears (a known limit until decisions were re-sent,
    // which made this soak scenario end so). Fix: before each attempt of a
    // failed node's release, until remove-node has run, the provisioner asks
    // the platform; a node holding gears becomes active, its release called off.
    name: 'a failed node that took gears before its release is active again, not stuck terminating',
    scenario: {
      seed: 555314442,
      demand: [
        { minutes: 3, gears: 8 },
        { minutes: 3, gears: 58 },
        { minutes: 7, gears: 33 },
        { minutes: 11, gears: 20 },
        { minutes: 18, gears: 9 },
        { minutes: 12, gears: 44 },
      ],
      faults: { errorBefore: 0.0903, errorAfter: 0.0189, crash: 0.0389, skewMs: 3337 },
      queue: { duplicateRate: 0.1119, reorderWindow: 2, delayRate: 0.1496, partialSendFailure: 0.1814 },
      concurrency: 0.1995,
      clockJumps: 0.0004,
      moveFailureRate: 0.1988,
      rebalanceRate: 0.02435,
      capacityCap: 3,
      maxNodesTotal: 3,
      store: 'memory',
    },
  },
  {
    // RunInstances went through unseen (the host never recorded), the node
    // timed out and failed, and its release, finding no instance id, only
    // reported the host and marked the node terminated before the sweeper
    // could adopt the host: it ran on, one over maxNodesTotal and maxCores.
    // Fix: a failed node's release first looks its host up by its node tag.
    name: 'the unrecorded host of a failed node is terminated with it',
    scenario: {
      seed: 63731016,
      demand: [
        { minutes: 17, gears: 11 },
        { minutes: 7, gears: 30 },
        { minutes: 14, gears: 40 },
        { minutes: 12, gears: 40 },
        { minutes: 13, gears: 16 },
        { minutes: 14, gears: 29 },
      ],
      faults: { errorBefore: 0.0164, errorAfter: 0.0291, crash: 0.03605, skewMs: 766 },
      queue: { duplicateRate: 0.0969, reorderWindow: 4, delayRate: 0.0012000000000000001, partialSendFailure: 0.17980000000000002 },
      concurrency: 0.13319999999999999,
      clockJumps: 0.05,
      moveFailureRate: 0.1998,
      rebalanceRate: 0.04965,
      capacityCap: 6,
      maxNodesTotal: 5,
      maxCores: 20,
      store: 'memory',
    },
  },
  {
    // A drain reported progress on every pass of the gear mover's run without
    // finishing, and the run looped over it forever (the simulation's clock
    // does not move within an invocation). Found when the controls read
    // shifted the fault sequence of the default chaos run. Fix: the run makes
    // at most 50 passes in a row that progress without waiting; the next tick
    // carries on. (Why that drain never finishes within one run is still open.)
    name: 'the gear mover\'s run ends when a drain keeps progressing without finishing',
    scenario: {
      seed: 645979869,
      demand: [
        { minutes: 11, gears: 57 },
        { minutes: 7, gears: 45 },
        { minutes: 4, gears: 15 },
        { minutes: 6, gears: 6 },
      ],
      faults: { errorBefore: 0.0004, errorAfter: 0.002, crash: 0.00025, skewMs: 23238 },
      queue: { duplicateRate: 0.10859999999999999, reorderWindow: 5, delayRate: 0.0094, partialSendFailure: 0.0838 },
      concurrency: 0.2415,
      clockJumps: 0.027750000000000004,
      moveFailureRate: 0.0534,
      rebalanceRate: 0.0497,
      capacityCap: 4,
      maxNodesTotal: 6,
      store: 'memory',
    },
  },
  {
    // Found once the broker's gears-refused reports were switched on in the
    // scenarios (they shift the fault sequence; the evaluator is not at
    // fault). A rebalance drain of node-2 chose node-5 as the target of three
    // moves; a rebalance recommendation for node-5 then drained it while those
    // moves were in flight. The platform lists a moved gear on its target only
    // once the move lands, so node-5 looked empty: its drain completed with no
    // move and the decommissioner began its release; the gears landed, and
    // remove-node refused the node for good ("still terminating after
    // settling"). Fix: the decommissioner's last check counts the pool's
    // moves in flight onto the node (lib/domain/decommission.ts) and keeps it
    // drained until they land.
    name: 'a node that gears are moving onto is not released',
    scenario: {
      seed: 2147483637,
      demand: [{ minutes: 20, gears: 33 }, { minutes: 17, gears: 6 }],
      faults: { errorBefore: 0.0993, errorAfter: 0.014000000000000002, crash: 0.0001, skewMs: 20952 },
      queue: { duplicateRate: 0.1059, reorderWindow: 2, delayRate: 0.1988, partialSendFailure: 0.008 },
      concurrency: 0.17789999999999997,
      clockJumps: 0.00515,
      moveFailureRate: 0.0004,
      rebalanceRate: 0.049600000000000005,
      attrition: true,
      hostileRate: 0.136,
      capacityCap: 2,
      maxNodesTotal: 7,
      maxCores: 31,
      store: 'memory',
      budget: { maxDraining: 3, maxMovesPerGear: 2, doNotMoveApps: 3 },
      platform: 'simulated',
    },
  },
  {
    // Not found by generation (the decommissioner's last check and the drain's
    // wait for moves onto its node close the windows it saw): a gear reaches a
    // node after its release began, here an operator's move just before
    // remove-node. The broker refuses remove-node while the node holds gears,
    // so the node stayed `terminating` for good ("still terminating after
    // settling"), needing an operator. Fix: the release hands such a node
    // back before its host goes (lib/workflows/release/release.ts, the
    // `handingBack` phase): `draining`, or `active` when the pool needs it;
    // the gear mover drains it again and the next release goes through.
    name: 'a node that gears reach after its release began is handed back, drained again and released',
    scenario: {
      ...quiet,
      seed: 11,
      // Two nodes at the start, demand for half of one: one is released. The demand stays flat, so no gear is
      // deleted and the gears that landed stay where they landed.
      demand: [{ minutes: 45, gears: 5 }],
      maxNodesTotal: 8,
    },
    mutants: { platform: gearsLandBeforeRemove(2) },
    minDrains: 1,
  },
  {
    // Found by a soak run (session 57): a launch that went through unseen left
    // its node without an instance id; the node timed out (maxNodeProvisionTime)
    // and failed while its host was still booting. The release's remove-node
    // found it in no district and counted that as removed; the host then
    // joined, the broker placed 3 gears on it, and the next tick terminated
    // it ("terminateHost of node-6 holding 3 gears"). Fix: a node whose
    // removal found it in no district is removed again just before its host
    // goes, and handed back if it holds gears by then (lib/workflows/release).
    name: 'a failed node that joins its district after its removal found it in none keeps its host',
    scenario: {
      seed: 732401047,
      demand: [
        { minutes: 3, gears: 13 },
        { minutes: 20, gears: 16 },
        { minutes: 18, gears: 13 },
        { minutes: 13, gears: 46 },
      ],
      faults: { errorBefore: 0.0263, errorAfter: 0.0792, crash: 0.04985, skewMs: 15779 },
      queue: { duplicateRate: 0.0063, reorderWindow: 6, delayRate: 0.088, partialSendFailure: 0.0654 },
      concurrency: 0.0411,
      clockJumps: 0.0327,
      moveFailureRate: 0.0294,
      rebalanceRate: 0.0127,
      attrition: false,
      hostileRate: 0.1748,
      capacityCap: 5,
      maxNodesTotal: 7,
      maxCores: 32,
      store: 'memory',
      platform: 'simulated',
      scaleUpOptions: { waitingRise: true, doubleWhenFull: false },
      market: { spot: true, dollars: 1000000 },
      renewal: 'drifted',
    },
  },
  {
    // Found by a soak run (session 58, finding 17; printed as it failed, before
    // the shrink). A renewal's replacement joined empty while the pool was
    // low; the evaluation that sent the drifted node's drain still saw that
    // node active and drained the replacement (0 gears, the least disruption).
    // The renewal's drain, begun the same minute, had nowhere to put its gears
    // and aborted; renewed again 38 minutes later, its drain was still moving
    // gears at the end of settling. Fix: a pending drain stays, marked sent,
    // until the gear mover has begun it, and the evaluator counts its node as
    // draining meanwhile (lib/domain/controls.ts nodesAsDecided).
    name: "a renewal's replacement is not drained before the renewal's drain begins",
    scenario: {
      seed: 980743482,
      demand: [{ minutes: 17, gears: 60 }, { minutes: 11, gears: 3 }, { minutes: 3, gears: 5 }],
      faults: { errorBefore: 0.0427, errorAfter: 0.0564, crash: 0.013200000000000002, skewMs: 19848 },
      queue: { duplicateRate: 0.05279999999999999, reorderWindow: 3, delayRate: 0.062200000000000005, partialSendFailure: 0.19840000000000002 },
      concurrency: 0.2991,
      clockJumps: 0.00025,
      moveFailureRate: 0.1996,
      rebalanceRate: 0.0148,
      attrition: false,
      hostileRate: 0.12960000000000002,
      capacityCap: 2,
      districtUids: 58,
      maxNodesTotal: 4,
      maxCores: 9,
      store: 'memory',
      budget: { maxDraining: 3, maxMovesPerGear: 2, doNotMoveApps: 0 },
      platform: 'simulated',
      scaleUpOptions: { waitingRise: true, doubleWhenFull: true },
      market: { spot: false, dollars: 1000000 },
      renewal: 'drifted',
    },
  },
  {
    // Found by the soak of session 60, on the memory store: an operator's
    // drain began, closed its node and ended aborted within the minute; its
    // pending item stayed until the evaluator's next pass, and the operator's
    // cancel-drain a minute later found that item, marked it cancelled and
    // said "cancelled before it began: it will not start". Fix: cancel-drain
    // looks at the item's drain first (and again after its write) and
    // refuses, writing nothing, when it already ran (lib/cli/nodes.ts).
    name: 'cancel-drain does not call a drain that already ran "cancelled before it began"',
    scenario: {
      seed: 1925505871,
      demand: [{ minutes: 19, gears: 14 }, { minutes: 8, gears: 47 }, { minutes: 3, gears: 3 }, { minutes: 12, gears: 36 }, { minutes: 16, gears: 14 }, { minutes: 18, gears: 45 }],
      faults: { errorBefore: 0.0007000000000000001, errorAfter: 0.0001, crash: 0.038500000000000006, skewMs: 29988 },
      queue: { duplicateRate: 0.08310000000000001, reorderWindow: 6, delayRate: 0.0854, partialSendFailure: 0.060200000000000004 },
      concurrency: 0.0015,
      clockJumps: 0.0011,
      moveFailureRate: 0.0712,
      rebalanceRate: 0.03885,
      attrition: true,
      hostileRate: 0.1406,
      districtUids: 23,
      maxNodesTotal: 4,
      maxCores: 10,
      store: 'memory',
      budget: { maxDraining: 3, maxMovesPerGear: 3, doNotMoveApps: 3 },
      platform: 'simulated',
      scaleUpOptions: { waitingRise: true, doubleWhenFull: true },
      market: { spot: true, dollars: 0.05 },
      operator: [{ minute: 23, node: 3, command: 'drain', cancelAfter: 1, racing: false }, { minute: 1, node: 2, command: 'drain', cancelAfter: 1, racing: false }],
    },
  },
  {
    // Found by the soak of session 60 (not a fault of the functions): every
    // node expired, the renewal waited while the pool was low until a
    // scale-down paid (47 minutes into settling), then renewed the last node;
    // its drain began 5 minutes before settling ended and a failed move was
    // still being retried. Fix (the harness): a drain that began after the
    // faults stopped gets up to LATE_DRAIN_GRACE_MINUTES more.
    name: "a renewal's drain begun late in settling is given the time to finish",
    scenario: {
      seed: 1601323696,
      demand: [{ minutes: 8, gears: 12 }, { minutes: 15, gears: 30 }, { minutes: 14, gears: 19 }, { minutes: 15, gears: 28 }, { minutes: 6, gears: 0 }, { minutes: 3, gears: 2 }],
      faults: { errorBefore: 0.0251, errorAfter: 0.0006000000000000001, crash: 0.0227, skewMs: 25510 },
      queue: { duplicateRate: 0.2973, reorderWindow: 7, delayRate: 0.16100000000000003, partialSendFailure: 0.0288 },
      concurrency: 0.1656,
      clockJumps: 0.0497,
      moveFailureRate: 0.19840000000000002,
      rebalanceRate: 0.00035000000000000005,
      attrition: true,
      hostileRate: 0.1158,
      capacityCap: 3,
      districtUids: 8,
      maxNodesTotal: 3,
      maxCores: 19,
      store: 'memory',
      platform: 'simulated',
      scaleUpOptions: { waitingRise: true, doubleWhenFull: true },
      market: { spot: true, dollars: 0.05 },
      renewal: 'expired',
    },
  },
  {
    // Found in session 65 by the new check that every gear the platform moved
    // is a moved move of some drain: an operator cancelled a drain (racing the
    // gear mover) while one move attempt had no handle (its start's answer
    // lost after it reached the platform). The stopping drain never looked it
    // up, and ended with it `moving`: the gear moved, unrecorded in the drain,
    // its move history and the metrics. Fix: a stopping drain finds such an
    // attempt by its key (Platform.findMove) and records what the platform
    // did, starting nothing (lib/workflows/drain/moving.ts pollMoves).
    name: 'a drain cancelled with a lost move start records the move the platform made',
    scenario: {
      seed: 2147483618,
      demand: [{ minutes: 9, gears: 4 }, { minutes: 10, gears: 6 }, { minutes: 14, gears: 58 }, { minutes: 5, gears: 59 }, { minutes: 11, gears: 31 }, { minutes: 6, gears: 48 }],
      faults: { errorBefore: 0.0536, errorAfter: 0.0619, crash: 0.01225, skewMs: 29999 },
      queue: { duplicateRate: 0.0009, reorderWindow: 9, delayRate: 0.0074, partialSendFailure: 0.1056 },
      concurrency: 0.1095,
      clockJumps: 0,
      moveFailureRate: 0.005,
      rebalanceRate: 0.05,
      attrition: false,
      hostileRate: 0.0364,
      capacityCap: 2,
      districtUids: 48,
      maxNodesTotal: 4,
      maxCores: 16,
      store: 'memory',
      platform: 'simulated',
      scaleUpOptions: { waitingRise: true, doubleWhenFull: true },
      market: { spot: true, dollars: 0.192 },
      operator: [{ minute: 2, node: 5, command: 'drain', cancelAfter: 2, racing: true }],
    },
  },
  {
    // Found in session 67 by a soak on the broker emulator (docs/RELIABILITY.md,
    // finding 22): a move's command exited 1 after the gear reached its target
    // (its old copy not removed), and its tenant deleted the gear in the same
    // minute. The broker then knew no such gear: the attempt was failed and
    // retried, every retry failed "Gear not found" and the drain aborted. Fix:
    // the platform says such a move failed with its gear `gone`, and the drain
    // drops it (lib/workflows/drain/moving.ts pollMoves, proven in
    // test/integration/drain-gear-deleted.test.ts); the check owes no record
    // to a move that exited 1 of a gear gone since.
    name: 'a gear its tenant deletes as its move exits 1 is dropped from the drain, not retried until the drain aborts',
    scenario: {
      seed: 1201625788,
      demand: [{ minutes: 8, gears: 33 }, { minutes: 6, gears: 5 }, { minutes: 5, gears: 48 }, { minutes: 4, gears: 15 }, { minutes: 9, gears: 0 }, { minutes: 11, gears: 44 }],
      faults: { errorBefore: 0.0302, errorAfter: 0.0126, crash: 0.01695, skewMs: 9431 },
      queue: { duplicateRate: 0.0027, reorderWindow: 5, delayRate: 0.1702, partialSendFailure: 0.1366 },
      concurrency: 0.2667,
      clockJumps: 0.00605,
      moveFailureRate: 0.1998,
      rebalanceRate: 0.0047,
      attrition: false,
      hostileRate: 0.1986,
      capacityCap: 3,
      districtUids: 15,
      maxNodesTotal: 4,
      store: 'memory',
      budget: { maxDraining: 1, maxMovesPerGear: 1, doNotMoveApps: 1 },
      platform: 'broker',
      zones: false,
      scaleUpOptions: { waitingRise: true, doubleWhenFull: false },
      market: { spot: true, dollars: 0.0001 },
      operator: [{ minute: 3, node: 1, command: 'drain', cancelAfter: 2, racing: true }, { minute: 1, node: 6, command: 'drain --replace', cancelAfter: 4, racing: true }],
    },
  },
];

describe('reliability counterexamples stay fixed', () => {
  it.each(regressions)('$name', async ({ scenario, fewestServing, mutants, minDrains }) => {
    const outcome = await runScenario(scenario, mutants);
    if (minDrains !== undefined) expect(outcome.drains).toBeGreaterThanOrEqual(minDrains);
    expect(outcome.violations).toEqual([]);
    if (fewestServing !== undefined) expect(outcome.fewestServing).toBeGreaterThanOrEqual(fewestServing);
    expect(outcome.ledger.lost).toEqual([]);
  });
});
