import { describe, expect, it } from 'vitest';
import { parseConfig, type ConfigInput } from '../../lib/config/index.js';
import { configWarnings, expiryWarnings, freeRestartWarnings, spotPriceWarnings } from '../../lib/config/warnings.js';

const template = (name: string, spot: boolean) => ({ instanceTypes: [{ name, vcpus: 8, memoryGiB: 32 }], spot });
const parsed = (pools: object[], rest: object = {}) => parseConfig({ ...rest, pools } as ConfigInput);

describe('configWarnings: what a valid configuration may still get wrong', () => {
  it('a spot pool priced by the on-demand list is named, with the price its drains are credited and the key to set', () => {
    const config = parsed([
      { district: 'd1', profile: 'small', max: 5, naming: { base: 'small' }, template: template('m5.xlarge', false) },
      { district: 'd1', profile: 'large', max: 5, naming: { base: 'large' }, template: template('m5.2xlarge', true) },
    ]);
    expect(spotPriceWarnings(config)).toEqual([
      'pools[1] (d1/large) launches spot instances and names no nodeHourPrice: its drains are credited $0.384/h (m5.2xlarge on demand, us-east-1), ' +
        'more than spot nodes cost, so scale-down restarts its tenants for savings it does not make. Set pools[1].nodeHourPrice to what its nodes cost.',
    ]);
    expect(configWarnings(config)).toEqual(expect.arrayContaining(spotPriceWarnings(config)));
  });

  it('says nothing once a price is written, for the pool or for every pool, or when no drain is priced', () => {
    const spot = { district: 'd1', profile: 'large', max: 5, template: template('m5.2xlarge', true) };
    expect(spotPriceWarnings(parsed([{ ...spot, nodeHourPrice: 0.12 }]))).toEqual([]);
    expect(spotPriceWarnings(parsed([spot], { scaleDown: { payoff: { nodeHourPrice: 0.12 } } }))).toEqual([]);
    expect(spotPriceWarnings(parsed([spot], { scaleDown: { enabled: false } }))).toEqual([]);
    expect(spotPriceWarnings(parsed([spot], { scaleDown: { payoff: { enabled: false } } }))).toEqual([]);
  });

  it('says nothing when handler ec2 launches the spot pool: the evaluator reads its prices from the spot market', () => {
    const launched = { ...template('m5.2xlarge', true), imageId: 'ami-0123456789abcdef0', subnets: ['subnet-0123456789abcdef0'] };
    const pools = [{ district: 'd1', profile: 'large', max: 5, template: launched }];
    expect(spotPriceWarnings(parsed(pools, { handler: 'ec2' }))).toEqual([]);
    expect(spotPriceWarnings(parsed(pools, { handler: 'spool', spool: { bucket: 'nodescaler-spool' } }))).toHaveLength(1);
  });

  it('a pool whose restarts are priced at nothing is named, with the key that priced them', () => {
    const pools = [
      { district: 'd1', profile: 'paid', max: 5, naming: { base: 'paid' } },
      { district: 'd1', profile: 'free', max: 5, naming: { base: 'free' }, moveCost: { disruptive: 0 } },
    ];
    const config = parsed(pools);
    expect(freeRestartWarnings(config)).toEqual([
      "pools[1] (d1/free): pools[1].moveCost.disruptive is 0: a restart of a tenant's only or head gear costs its drains nothing, " +
        'so scale-down drains whenever a node saves anything and moves those gears as readily as idle ones. Price a restart (default 0.0225).',
    ]);
    expect(configWarnings(config)).toEqual(expect.arrayContaining(freeRestartWarnings(config)));
    // Priced at nothing for every pool, but one pool prices its own: the others are named by the global key.
    const global = parsed([{ ...pools[0]!, moveCost: { disruptive: 0.05 } }, { ...pools[1]!, moveCost: undefined }], { scaleDown: { payoff: { moveCost: { disruptive: 0 } } } });
    expect(freeRestartWarnings(global)).toEqual([expect.stringMatching(/^pools\[1\] \(d1\/free\): scaleDown\.payoff\.moveCost\.disruptive is 0: /)]);
    // Nothing when no drain is priced.
    expect(freeRestartWarnings(parsed(pools, { scaleDown: { payoff: { enabled: false } } }))).toEqual([]);
    expect(freeRestartWarnings(parsed(pools, { scaleDown: { enabled: false } }))).toEqual([]);
  });

  it("keeps the sender check's warnings", () => {
    const config = parsed([{ district: 'd1', profile: 'small', max: 5 }], { statsAuth: { enabled: false } });
    expect(configWarnings(config)).toEqual([expect.stringMatching(/^statsAuth\.enabled is false/)]);
  });
});

describe('expiryWarnings: an expireAfter that restarts tenants more often than hosts need rolling', () => {
  const pool = { district: 'd1', profile: 'small', max: 5, template: template('m5.xlarge', false) };
  const other = { ...pool, profile: 'large', naming: { base: 'large' } };
  it('warns below a week, naming the pool, the key and the value, and says nothing at a week or more, or with scale-down off', () => {
    expect(expiryWarnings(parsed([pool], { scaleDown: { expireAfter: '2d' } }))).toEqual([
      "pools[0] (d1/small): scaleDown.expireAfter is 2d: every node nodescaler launched is renewed at least that often, each renewal restarting the tenants of its gears. Rolling hosts for patches usually takes weeks (Karpenter's default is 30d).",
    ]);
    expect(configWarnings(parsed([pool], { scaleDown: { expireAfter: '6h' } }))).toEqual([expect.stringContaining('scaleDown.expireAfter is 6h')]);
    expect(expiryWarnings(parsed([pool], { scaleDown: { expireAfter: '7d' } }))).toEqual([]);
    expect(expiryWarnings(parsed([pool]))).toEqual([]);
    expect(expiryWarnings(parsed([pool], { scaleDown: { enabled: false, expireAfter: '1d' } }))).toEqual([]);
  });

  it('reads each pool\'s own expireAfter first: a pool may shorten it, or opt out with never', () => {
    const warnings = expiryWarnings(parsed([{ ...pool, expireAfter: '3d' }, { ...other, expireAfter: 'never' }], { scaleDown: { expireAfter: '2d' } }));
    expect(warnings).toEqual([expect.stringMatching(/^pools\[0\] \(d1\/small\): pools\[0\].expireAfter is 3d: /)]);
  });

  it('says an expireGrace lifts nothing where no pool\'s nodes expire', () => {
    expect(expiryWarnings(parsed([pool], { scaleDown: { expireGrace: '1d' } }))).toEqual([
      "scaleDown.expireGrace is 1d but no pool's nodes expire (scaleDown.expireAfter and pools[].expireAfter unset or never): it lifts nothing.",
    ]);
    expect(expiryWarnings(parsed([pool, { ...other, expireAfter: '30d' }], { scaleDown: { expireGrace: '1d' } }))).toEqual([]);
    expect(expiryWarnings(parsed([pool], { scaleDown: { expireAfter: '30d', expireGrace: '1d' } }))).toEqual([]);
  });

  it('says a driftGrace lifts nothing where drifted nodes are not renewed', () => {
    expect(expiryWarnings(parsed([pool], { scaleDown: { driftGrace: '12h' } }))).toEqual([
      'scaleDown.driftGrace is 12h but scaleDown.renewDrifted is off: no drifted node is renewed, so it lifts nothing.',
    ]);
    expect(expiryWarnings(parsed([pool], { scaleDown: { renewDrifted: true, driftGrace: '12h' } }))).toEqual([]);
  });
});
