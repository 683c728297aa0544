/**
 * The reliability suite's checks can fail: each test breaks one part on
 * purpose (a store that lets old stats win, a cloud that forgets its
 * idempotency tokens, a platform that hides gears or loses them, functions
 * blind to an operator's cancel) and the
 * scenario must report the matching invariant violation.
 */
import { describe, expect, it, vi } from 'vitest';
import { ConflictError } from '../../lib/errors.js';
import type { SimulatedCloud } from '../../lib/adapters/local/simulated-cloud.js';
import type { SimulatedPlatform } from '../../lib/adapters/local/simulated-platform.js';
import type { HostSpec } from '../../lib/ports/cloud.js';
import type { StateStore } from '../../lib/ports/state-store.js';
import type { OperatorAction } from './support/operator.js';
import { runScenario, type Scenario } from './support/scenario.js';
import { firstFailureReporter } from './support/tally.js';

const calm: Scenario = {
  seed: 11,
  demand: [
    { minutes: 10, gears: 15 },
    { minutes: 15, gears: 45 },
    { minutes: 20, gears: 5 },
  ],
  faults: { errorBefore: 0, errorAfter: 0, crash: 0, skewMs: 0 },
  queue: { duplicateRate: 0, reorderWindow: 1, delayRate: 0 },
  concurrency: 0,
  clockJumps: 0,
  moveFailureRate: 0,
  maxNodesTotal: 8,
  store: 'memory',
};

/** Replaces one method of a port, keeping the rest. */
function override<T extends object>(port: T, method: string, replacement: (target: T, ...args: never[]) => unknown): T {
  return new Proxy(port, {
    get(target, property, receiver) {
      if (property === method) return (...args: never[]) => replacement(target, ...args);
      const value = Reflect.get(target, property, receiver) as unknown;
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
}

describe('the reliability checks catch a broken system', () => {
  it('passes the same scenario with nothing broken', async () => {
    const outcome = await runScenario(calm);
    expect(outcome.violations).toEqual([]);
    expect(outcome.drains).toBeGreaterThan(0);
    expect(outcome.scaleUps).toBeGreaterThan(0);
  });

  it('reports a ghost node adopted or spoofed stats stored when the evaluator believes every sender (statsAuth off)', async () => {
    const hostile = { ...calm, hostileRate: 0.5 };
    expect((await runScenario(hostile)).violations).toEqual([]);
    const outcome = await runScenario(hostile, { config: (config) => ({ ...config, statsAuth: { enabled: false } }) });
    expect(outcome.hostileMessages).toBeGreaterThan(5);
    expect(outcome.violations.some((v) => /adopted from a hostile report|hostile stats stored for/.test(v))).toBe(true);
  });

  it('reports stats going back in time when the store lets any report win', async () => {
    const lastWins = (store: StateStore) =>
      override(store, 'putNodeStats', async (target, nodeId: string, stats: { reportedAt: string }) => {
        const node = await target.getNode(nodeId);
        if (!node) return target.putNodeStats(nodeId, stats as never);
        // A store's own patch never carries stats (they are their own item); this broken one writes them anyway.
        const written = await target.updateNode(nodeId, node.version, { stats } as never);
        return { applied: true, node: written };
      });
    const outcome = await runScenario({ ...calm, queue: { duplicateRate: 0.3, reorderWindow: 10, delayRate: 0.5 } }, { store: lastWins });
    expect(outcome.violations.join('\n')).toMatch(/stats of \S+ went back/);
  });

  it('reports a drain begun after cancel-drain cancelled it, when the functions do not read the cancel', async () => {
    const blind = (store: StateStore) =>
      override(store, 'listControls', async (target) => {
        const controls = await target.listControls();
        return { ...controls, pendingDrains: controls.pendingDrains.map(({ cancelledAt: _at, cancelledBy: _by, cancelReason: _why, ...pending }) => pending) };
      });
    // A drain waiting for its replacement (the evaluator must not start it) and one waiting for the gear mover (which must refuse it).
    const cases: Array<[OperatorAction, string]> = [
      [{ minute: 3, node: 0, command: 'drain --replace', cancelAfter: 0 }, 'manual:after:'],
      [{ minute: 18, node: 1, command: 'drain', cancelAfter: 0 }, 'manual:2026'],
    ];
    for (const [action, drainOf] of cases) {
      const operator: Scenario = { ...calm, operator: [action] };
      const clean = await runScenario(operator);
      expect(clean.violations).toEqual([]);
      expect(clean.operator).toMatchObject({ done: 2, cancelledBeforeBegun: 1 });
      const outcome = await runScenario(operator, { store: blind });
      const begun = outcome.violations.filter((violation) => /drain \S+ of \S+ began \(.*\) after cancel-drain cancelled it before it began/.test(violation));
      expect(begun).toHaveLength(1);
      expect(begun[0]).toContain(`drain drain:${drainOf}`);
    }
  });

  it('reports a node name launched twice when the cloud ignores its idempotency token', async () => {
    let call = 0;
    const forgetful = (cloud: SimulatedCloud) =>
      override(cloud, 'createHost', (target, spec: HostSpec) => target.createHost({ ...spec, idempotencyToken: `${spec.idempotencyToken}-${++call}` }));
    const outcome = await runScenario({ ...calm, faults: { errorBefore: 0, errorAfter: 0.5, crash: 0, skewMs: 0, only: ['cloud.createHost'] } }, { cloud: forgetful });
    expect(outcome.violations.join('\n')).toMatch(/hosts launched for node name|launched \d+ hosts, asked for/);
  });

  it('reports a host terminated with gears when the platform hides them', async () => {
    // Lists no gear on any node, and answers remove-node without removing anything.
    const hiding = (platform: SimulatedPlatform) => override(override(platform, 'listGears', async () => []), 'removeNode', async () => undefined);
    const outcome = await runScenario(calm, { platform: hiding });
    expect(outcome.violations.join('\n')).toMatch(/holding \d+ gears/);
  });

  it('reports lost gears when a failed move drops the gear', async () => {
    const dropping = (platform: SimulatedPlatform) =>
      override(platform, 'startMove', async (target, gear: { uuid: string }) => {
        target.removeGear(gear.uuid);
        throw new ConflictError(`move of ${gear.uuid} failed`, undefined);
      });
    const outcome = await runScenario(calm, { platform: dropping });
    expect(outcome.violations.join('\n')).toMatch(/gear \S+ lost/);
  });

  it('reports gears left unplaced when a broker that requires zones gets nodes added in none (the pool names no region)', async () => {
    // Ends at 45 gears: more than the two nodes an operator had put in a zone hold.
    const zoned: Scenario = { ...calm, demand: calm.demand.slice(0, 2), platform: 'broker', zones: true };
    const placed = await runScenario(zoned);
    expect(placed.violations).toEqual([]);
    expect(placed.joinedInZone).toBeGreaterThan(0);
    const outcome = await runScenario(zoned, {
      config: (config) => ({ ...config, pools: config.pools!.map(({ openshiftRegion: _, ...pool }) => pool) }),
    });
    expect(outcome.joinedInZone).toBe(0);
    expect(outcome.violations.join('\n')).toMatch(/gears still unplaced after settling/);
  });
});

describe('a failing scenario is printed before fast-check shrinks it', () => {
  it('prints the first failing scenario of a check once, with its first problem, as JSON a regression entry takes', () => {
    const printed = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    try {
      const report = firstFailureReporter('chaos-memory');
      report({ ...calm, seed: 7 }, ['host node-6 terminated while holding 3 gears']);
      report({ ...calm, seed: 8 }, ['a shrunk one']);
      expect(printed).toHaveBeenCalledTimes(1);
      const [text] = printed.mock.calls[0] as [string];
      expect(text).toMatch(/^reliability chaos-memory: a scenario failed \(1 problem\(s\), e\.g\. "host node-6 terminated while holding 3 gears"\)/);
      expect(JSON.parse(text.split('\n')[1]!)).toEqual({ ...calm, seed: 7 });
    } finally {
      printed.mockRestore();
    }
  });
});
