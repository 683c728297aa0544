/**
 * The simulated environment (lib/sim/runtime.ts: replays, the reliability
 * suite): every port comes from the simulation, none from AWS. Virtual time
 * passes only between invocations, so the gear mover gets no `wait` (one pass
 * per invocation; the next tick carries the drains on) and backoff waits on
 * the simulation's `sleep` when it gives one.
 */
import type { DecommissionerPorts } from '../app/decommission.js';
import type { GearMoverPorts } from '../app/drain.js';
import type { EvaluatorPorts } from '../app/evaluate.js';
import type { Sleep } from '../app/steps.js';
import type { Config } from '../config/index.js';
import { decommissionerHandler } from '../handlers/decommissioner.js';
import { gearMoverHandler } from '../handlers/gear-mover.js';
import { nodeProvisionerHandler } from '../handlers/node-provisioner.js';
import { thresholdEvaluatorHandler } from '../handlers/threshold-evaluator.js';
import type { Cloud } from '../ports/cloud.js';
import type { Clock } from '../ports/clock.js';
import type { Dns } from '../ports/dns.js';
import type { Log } from '../ports/log.js';
import type { OnDemandPrices, SpotPrices } from '../ports/market-prices.js';
import type { Metrics } from '../ports/metrics.js';
import type { Notifier } from '../ports/notifier.js';
import type { Platform } from '../ports/platform.js';
import type { Queue } from '../ports/queue.js';
import type { StateStore } from '../ports/state-store.js';
import type { ProvisionerPorts } from '../workflows/launch/context.js';

/** What a simulation provides: the world's ports. */
export interface SimPorts {
  store: StateStore;
  queue: Queue;
  clock: Clock;
  cloud: Cloud;
  platform: Platform;
  log: Log;
  metrics: Metrics;
  dns?: Dns;
  notifier?: Notifier;
  /** How backoff waits (no virtual time, in the reliability suite); default a real timer. */
  sleep?: Sleep;
  /** The markets the evaluator prices drains by; none in the replay (the built-in list), scripted in the reliability suite. */
  spotPrices?: SpotPrices;
  onDemandPrices?: OnDemandPrices;
}

export function simThresholdEvaluator(ports: SimPorts, config: Config) {
  const { store, queue, clock, metrics, log, platform, cloud, spotPrices, onDemandPrices } = ports;
  // The simulated cloud answers for node-stats senders as EC2 does (statsAuth).
  const evaluatorPorts: EvaluatorPorts = { store, queue, clock, metrics, log, platform, hosts: cloud, ...(spotPrices ? { spotPrices } : {}), ...(onDemandPrices ? { onDemandPrices } : {}) };
  return thresholdEvaluatorHandler({ ports: evaluatorPorts, config });
}

export function simNodeProvisioner(ports: SimPorts, config: Config) {
  return nodeProvisionerHandler({ ports: hostPorts(ports) satisfies ProvisionerPorts, config });
}

export function simDecommissioner(ports: SimPorts, config: Config) {
  return decommissionerHandler({ ports: hostPorts(ports) satisfies DecommissionerPorts, config });
}

export function simGearMover(ports: SimPorts, config: Config) {
  const { store, queue, clock, metrics, log, platform } = ports;
  const moverPorts: GearMoverPorts = { store, queue, clock, metrics, log, platform };
  return gearMoverHandler({ ports: moverPorts, config });
}

function hostPorts({ store, cloud, clock, metrics, log, platform, dns, notifier, sleep }: SimPorts) {
  return {
    store,
    cloud,
    clock,
    metrics,
    log,
    platform,
    ...(dns ? { dns } : {}),
    ...(notifier ? { notifier } : {}),
    ...(sleep ? { sleep } : {}),
  };
}
