import { describe, expect, it } from 'vitest';
import { parseConfig, type Config, type ConfigInput } from '../../lib/config/index.js';
import { decidePool } from '../../lib/domain/evaluate.js';
import type { NodeRecord } from '../../lib/domain/model.js';
import { DEFAULT_NODE_HOUR_PRICE, INSTANCE_PRICES, nodeHourPrice, nodeHourPriceOf } from '../../lib/domain/node-price.js';
import { payoffGate } from '../../lib/domain/payoff-gate.js';
import { computeUtilization } from '../../lib/domain/utilization.js';
import { renderStatus, statusView } from '../../lib/cli/status.js';
import { Style } from '../../lib/cli/render.js';
import { NO_CONTROLS } from '../../lib/domain/controls.js';
import { ValidationError } from '../../lib/errors.js';
import { POOL, config, demandHistory, evaluation, minutesAgo, node, pool } from '../support/builders.js';
import { quietDay, withGears } from '../support/decisions.js';

const typed = (...names: string[]) => ({ instanceTypes: names.map((name) => ({ name, vcpus: 4, memoryGiB: 16 })) });

describe('nodeHourPrice: what one node-hour of a pool costs the pays-off check', () => {
  it('with nothing priced and no instance type, the default (an m5.xlarge on demand)', () => {
    expect(nodeHourPrice({}, undefined)).toBe(DEFAULT_NODE_HOUR_PRICE);
    expect(nodeHourPrice({}, { template: typed() })).toBe(0.192);
  });

  it("the list price of the node's own instance type, else of the pool's first one", () => {
    const pool = { template: typed('m5.2xlarge', 'm5a.2xlarge') };
    expect(nodeHourPrice({}, pool)).toBe(INSTANCE_PRICES['m5.2xlarge']);
    expect(nodeHourPrice({}, pool, { instanceType: 'm5.4xlarge' })).toBe(0.768);
    // A type the list does not know (the pool's second choice here) is priced as the pool's first.
    expect(nodeHourPrice({}, pool, { instanceType: 'm5a.2xlarge' })).toBe(0.384);
    expect(nodeHourPrice({}, { template: typed('x9.huge') }, { instanceType: 'x9.huge' })).toBe(DEFAULT_NODE_HOUR_PRICE);
  });

  it("what the operator wrote comes before any list price: the pool's own, then the global one; 0 included", () => {
    const pool = { template: typed('m5.2xlarge') };
    expect(nodeHourPrice({ nodeHourPrice: 0.15 }, pool, { instanceType: 'm5.4xlarge' })).toBe(0.15);
    expect(nodeHourPrice({ nodeHourPrice: 0.15 }, { ...pool, nodeHourPrice: 0.07 }, { instanceType: 'm5.4xlarge' })).toBe(0.07);
    expect(nodeHourPrice({ nodeHourPrice: 0.15 }, { ...pool, nodeHourPrice: 0 })).toBe(0);
  });

  it('a negative price is refused, naming the field and the value', () => {
    const input = (pools: ConfigInput['pools'], payoff = {}) => parseConfig({ scaleDown: { payoff }, pools } as ConfigInput);
    const refusal = (run: () => unknown) => {
      try {
        run();
      } catch (error) {
        expect(error).toBeInstanceOf(ValidationError);
        return (error as ValidationError).message;
      }
      throw new Error('accepted');
    };
    expect(refusal(() => input([{ district: 'd1', profile: 'small', max: 5, nodeHourPrice: -1 }]))).toMatch(/pools\.0\.nodeHourPrice.*-1/s);
    expect(refusal(() => input([{ district: 'd1', profile: 'small', max: 5 }], { nodeHourPrice: -0.5 }))).toMatch(/scaleDown\.payoff\.nodeHourPrice.*-0\.5/s);
    expect(input([{ district: 'd1', profile: 'small', max: 5, nodeHourPrice: 0.07 }]).pools[0]!.nodeHourPrice).toBe(0.07);
  });
});

describe('the pays-off check prices each node as its pool and type say', () => {
  const now = new Date('2026-01-06T22:30:00Z');
  // A restart priced at $0.30: node c's 10 gears cost $3.00, and a drain must save twice that. A quiet day says c stays
  // unneeded 24 hours: $4.61 at an m5.xlarge's $0.192/h does not pay, $9.22 at an m5.2xlarge's $0.384/h does.
  const costly = { scaleDown: { payoff: { moveCost: { disruptive: 0.3 } } } };
  const quiet = demandHistory(now, () => 130, 25);

  function checkC(cfg: Config, instanceType?: string) {
    const nodes: NodeRecord[] = [node('a', { gears: 60 }), node('b', { gears: 60 }), node('c', { gears: 10, ...(instanceType ? { instanceType } : {}) })];
    for (const n of nodes) n.stats!.reportedAt = now.toISOString();
    const u = computeUtilization({ pool: POOL, nodes, drains: [], now, statsMaxAge: cfg.statsMaxAge, expectedGearsPerNode: 100 });
    return payoffGate({ config: cfg, poolConfig: cfg.pools[0]!, history: quiet, now, utilization: u }).check!(nodes[2]!, 300);
  }

  it('a node twice the size saves twice per hour: refused in a pool of m5.xlarge, drained in one of m5.2xlarge', () => {
    expect(checkC(config(costly, { template: typed('m5.xlarge') } as object))).toEqual({
      refused: "does not pay: 24.0h unneeded (yesterday's demand) saves $4.61 at $0.192/h < 2 x $3.00 for 10 disruptive moves",
      pending: true,
    });
    expect(checkC(config(costly, { template: typed('m5.2xlarge') } as object))).toEqual({
      accepted: "pays: 24.0h unneeded (yesterday's demand) saves $9.22 at $0.384/h >= 2 x $3.00 for 10 disruptive moves",
    });
  });

  it("a node launched as the pool's larger fallback type is priced as that type", () => {
    const cfg = config(costly, { template: typed('m5.xlarge', 'm5.2xlarge') } as object);
    expect(checkC(cfg)).toMatchObject({ refused: expect.stringContaining('at $0.192/h') });
    expect(checkC(cfg, 'm5.2xlarge')).toMatchObject({ accepted: expect.stringContaining('saves $9.22 at $0.384/h') });
  });

  it("the pool's own price (spot nodes) comes before its type's list price", () => {
    const cfg = config(costly, { template: typed('m5.2xlarge'), nodeHourPrice: 0.1 } as object);
    expect(checkC(cfg, 'm5.2xlarge')).toMatchObject({ refused: expect.stringContaining('saves $2.40 at $0.1/h < 2 x $3.00') });
  });

  it("the evaluator hands the check its pool's configuration: the decision names the pool's price", () => {
    const decide = (template: object) =>
      decidePool(evaluation({ config: config({}, { template } as object), nodes: withGears([40, 40, 32, 12]), pool: pool({ demandHistory: quietDay, lowSince: minutesAgo(7) }) })).decision;
    expect(decide(typed('m5.4xlarge'))).toMatchObject({ kind: 'scale-down', reason: expect.stringContaining('saves $18.43 at $0.768/h >= 2 x $0.27') });
    expect(decide(typed())).toMatchObject({ kind: 'scale-down', reason: expect.stringContaining('saves $4.61 at $0.192/h') });
  });
});

describe('nodescaler status names what each pool\'s drains are credited, and why', () => {
  const pools = [
    { district: 'd1', profile: 'small', max: 5, naming: { base: 'small' }, template: typed('m5.2xlarge') },
    { district: 'd1', profile: 'spot', max: 5, naming: { base: 'spot' }, nodeHourPrice: 0.07, template: { ...typed('m5.2xlarge'), spot: true } },
    { district: 'd1', profile: 'other', max: 5, naming: { base: 'other' } },
  ];
  const view = (overrides: object = {}) => {
    const cfg = config({ ...overrides, pools } as Parameters<typeof config>[0]);
    const snapshot = { now: new Date('2026-01-06T12:00:00Z'), config: cfg, allNodes: [], controls: NO_CONTROLS, pools: cfg.pools.map((p) => ({ pool: `${p.district}/${p.profile}`, config: p, nodes: [], drains: [] })) };
    return statusView(snapshot, 'local state');
  };

  it('the source of each price: the list, the pool\'s own, the default', () => {
    expect(nodeHourPriceOf({}, { template: typed('m5.2xlarge') })).toEqual({ dollars: 0.384, source: 'm5.2xlarge on demand, us-east-1' });
    expect(view().pools.map((p) => p.nodeHourPrice)).toEqual([
      { dollars: 0.384, source: 'm5.2xlarge on demand, us-east-1' },
      { dollars: 0.07, source: "the pool's nodeHourPrice" },
      { dollars: 0.192, source: 'the default: an m5.xlarge on demand' },
    ]);
    const text = renderStatus(view(), { style: new Style(false), width: 100 }).join('\n');
    expect(text).toContain('  drains priced at $0.384 a node-hour (m5.2xlarge on demand, us-east-1)');
    expect(text).toContain("  drains priced at $0.07 a node-hour (the pool's nodeHourPrice)");
  });

  it("the price of each kind of move: the global one, or the pool's own over it key by key; none with the check off", () => {
    const own = [{ ...pools[0]!, moveCost: { disruptive: 0.1 } }, ...pools.slice(1)];
    const cfg = config({ pools: own } as Parameters<typeof config>[0]);
    const snapshot = { now: new Date('2026-01-06T12:00:00Z'), config: cfg, allNodes: [], controls: NO_CONTROLS, pools: cfg.pools.map((p) => ({ pool: `${p.district}/${p.profile}`, config: p, nodes: [], drains: [] })) };
    const status = statusView(snapshot, 'local state');
    expect(status.pools.map((p) => p.moveCost)).toEqual([
      { idle: 0, sibling: 0.0045, disruptive: 0.1, source: "the pool's moveCost" },
      { idle: 0, sibling: 0.0045, disruptive: 0.0225, source: 'scaleDown.payoff.moveCost' },
      { idle: 0, sibling: 0.0045, disruptive: 0.0225, source: 'scaleDown.payoff.moveCost' },
    ]);
    const text = renderStatus(status, { style: new Style(false), width: 120 }).join('\n');
    expect(text).toContain("  moves priced at $0.1 a restart, $0.0045 a sibling gear's, $0 an idle gear's (the pool's moveCost)");
    expect(view({ scaleDown: { payoff: { enabled: false } } }).pools.map((p) => p.moveCost)).toEqual([null, null, null]);
  });

  it('a global price is named as the setting it is; with scale-down or its pays-off check off, no price', () => {
    expect(view({ scaleDown: { payoff: { nodeHourPrice: 0.15 } } }).pools[0]!.nodeHourPrice).toEqual({ dollars: 0.15, source: 'scaleDown.payoff.nodeHourPrice' });
    expect(view({ scaleDown: { enabled: false } }).pools.map((p) => p.nodeHourPrice)).toEqual([null, null, null]);
    expect(view({ scaleDown: { payoff: { enabled: false } } }).pools[0]!.nodeHourPrice).toBeNull();
  });
});
